// Package peers is test tooling: it starts and stops the real programs
// sitebox is tested and benchmarked against (xrootd, cmsd, XCache, Slurm,
// Toxiproxy) and sitebox itself as a child process. Only tests and
// cmd/sitebox-bench import it; the product binary must not.
package peers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a started child with its log.
type Process struct {
	Name string
	Cmd  *exec.Cmd
	Log  *LogBuffer // combined stdout and stderr (also the xrootd log tail)
	done chan struct{}
	err  error
}

// LogBuffer collects a child's output. The copying goroutine os/exec
// starts writes it while tests read it, so it takes a lock (a plain
// bytes.Buffer would race).
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Count returns how many times marker occurs in the output, waiting up
// to within for it to reach atLeast: the output comes through a pipe
// that another goroutine copies, so a child's last lines may arrive
// after the client whose requests made them has returned.
func (l *LogBuffer) Count(marker string, atLeast int, within time.Duration) int {
	deadline := time.Now().Add(within)
	for {
		n := strings.Count(l.String(), marker)
		if n >= atLeast || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
// It is drawn at random below the kernel's ephemeral range (32768 and up
// on Linux): a port the kernel hands out for ":0" is also what it hands
// to outgoing connections, so a busy test run (many xrdcp clients) could
// take it as a client's local port before the server binds it.
//
// A port is handed out once per process: a caller asking for two ports
// before it binds either (a server's root:// and https:// addresses)
// must not get the same one twice, which a random draw allows (seen:
// both of a test server's addresses on one port).
func FreePort() (int, error) {
	const lo, hi = 10000, 32000
	for range 200 {
		port := lo + mrand.IntN(hi-lo)
		if !handedOut.claim(port) {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		ln.Close()
		return port, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// handedOut is every port FreePort has returned in this process: ports
// are the process's (indeed the machine's) to share, so the record is
// too.
var handedOut = &portSet{ports: map[int]bool{}}

type portSet struct {
	mu    sync.Mutex
	ports map[int]bool
}

// claim records port as handed out, reporting false if it already was.
func (s *portSet) claim(port int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ports[port] {
		return false
	}
	s.ports[port] = true
	return true
}

// start runs cmd in its own process group and waits until every port in
// ports accepts connections on 127.0.0.1.
func start(ctx context.Context, name string, cmd *exec.Cmd, ports []int, logFile string) (*Process, error) {
	p := &Process{Name: name, Cmd: cmd, Log: &LogBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Log, p.Log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	deadline := time.Now().Add(20 * time.Second)
	for _, port := range ports {
		for {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-p.done:
				return nil, fmt.Errorf("%s exited before listening on %d (%v): %s", name, port, p.err, p.tail(logFile))
			case <-ctx.Done():
				p.Stop()
				return nil, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				p.Stop()
				return nil, fmt.Errorf("%s not listening on %d after 20s: %s", name, port, p.tail(logFile))
			}
		}
	}
	return p, nil
}

func (p *Process) tail(logFile string) string {
	out := p.Log.String()
	if logFile != "" {
		if b, err := os.ReadFile(logFile); err == nil {
			out += string(b)
		}
	}
	if len(out) > 2000 {
		out = "…" + out[len(out)-2000:]
	}
	return strings.TrimSpace(out)
}

// Stop kills the process group and reaps the child. Safe to call twice.
func (p *Process) Stop() {
	if p == nil || p.Cmd.Process == nil {
		return
	}
	syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Exited is closed when the process has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Kill sends SIGKILL at once (a crash, for failure tests).
func (p *Process) Kill() {
	syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// PeakRSS returns the process's peak resident memory (VmHWM) in bytes.
func (p *Process) PeakRSS() (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Cmd.Process.Pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("VmHWM not found")
}

// StartSitebox runs the sitebox binary with args and waits for ports.
func StartSitebox(ctx context.Context, binary string, ports []int, args ...string) (*Process, error) {
	return start(ctx, "sitebox", exec.Command(binary, args...), ports, "")
}
