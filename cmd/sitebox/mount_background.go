package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"log/syslog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// mountReadyEnv names the descriptor on which a background mount's
// child says it has mounted; the parent sets it, nobody else should.
const mountReadyEnv = "SITEBOX_MOUNT_READY_FD"

// mountChildArgs are the arguments that run the same mount again: every
// flag given (the -o options already applied to them) but the ones that
// ask for a background mount.
func mountChildArgs(fl *pflag.FlagSet, rawURL, dir string) []string {
	args := []string{"mount"}
	fl.Visit(func(f *pflag.Flag) {
		if f.Name != "options" && f.Name != "background" {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	return append(args, "--", rawURL, dir)
}

// startBackground runs `sitebox args...` as a background mount, as
// mount(8) expects of a helper: the child runs in a session of its own
// (no terminal, no signal of the caller's reaches it), with stdin and
// stdout on /dev/null, and this returns once it has mounted. Should it
// fail first, its error (its stderr) is this one's.
func startBackground(args []string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--background: cannot find the sitebox program to start: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), mountReadyEnv+"=3") // ExtraFiles[0]
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		w.Close()
		return err
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return fmt.Errorf("--background: %w", err)
	}
	said := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(stderr)
		said <- b
	}()
	ready, _ := io.ReadAll(r) // until the child reports, or ends
	// The child lets go of its stderr before it reports ready, and at
	// exit: what it said is all there now.
	out := <-said
	if string(ready) == "ready\n" {
		os.Stderr.Write(out) // warnings, such as a log going nowhere
		return cmd.Process.Release()
	}
	werr := cmd.Wait()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "sitebox: ")
	}
	msg := strings.Join(lines, "\n")
	if msg == "" {
		return fmt.Errorf("the mount process ended (%v) before mounting", werr)
	}
	return errors.New(msg)
}

// backgroundChild is the child's side of startBackground: the
// descriptor to report on, nil when this is no background child.
func backgroundChild() *os.File {
	v := os.Getenv(mountReadyEnv)
	if v == "" {
		return nil
	}
	os.Unsetenv(mountReadyEnv) // not for anything the mount starts
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil
	}
	return os.NewFile(uintptr(fd), "ready")
}

// detach ends the child's ties to its parent once the mount is there:
// its stderr goes to the log file (or /dev/null), the working directory
// to /, and the parent hears "ready". warning, if any, is said first, for
// the parent to show.
func detach(ready, logFile *os.File, warning string) {
	if warning != "" {
		fmt.Fprintln(os.Stderr, warning)
	}
	to := logFile
	if to == nil {
		if devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
			defer devNull.Close()
			to = devNull
		}
	}
	if to != nil {
		unix.Dup3(int(to.Fd()), 2, 0)
	}
	os.Chdir("/") // hold no directory the operator may want to unmount
	ready.WriteString("ready\n")
	ready.Close()
}

// mountLogger is where the mount logs: the log file when one is given;
// in a background child, else the system log (journald reads it); else
// stderr. file is the log file opened, nil for none; warning says the
// log goes nowhere (a child without a system log), for detach to tell.
func (f *mountFlags) mountLogger(child bool, lv *slog.LevelVar) (log *slog.Logger, file *os.File, warning string, err error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, nil, "", fmt.Errorf("--log-level %q: want debug, info, warn or error", f.logLevel)
	}
	lv.Set(l)
	var out io.Writer = os.Stderr
	switch {
	case f.logFile != "":
		if file, err = os.OpenFile(f.logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640); err != nil {
			return nil, nil, "", fmt.Errorf("--log-file: %w", err)
		}
		out = file
	case child:
		sl, err := syslog.New(syslog.LOG_DAEMON|syslog.LOG_INFO, "sitebox-mount")
		if err != nil {
			warning = fmt.Sprintf("sitebox mount: warning: no system log (%v): the mount's log is discarded; give -o log_file=PATH to keep it", err)
			out = io.Discard
		} else {
			out = sl
		}
	}
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: lv})), file, warning, nil
}
