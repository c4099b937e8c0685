package interop

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sitebox/internal/director"
)

// approve shows what it would approve and asks on a terminal: "n" records
// nothing, "y" approves. Without a terminal and without --yes it fails
// at once, saying so, rather than wait for an answer that never comes.
func TestFederationApproveAsks(t *testing.T) {
	region := startFedNode(t, "region", "R", "[director]\nenabled = true\n")
	conf := filepath.Join(region.state, "sitebox.toml")
	req := craftRequest(t, director.Request{Member: director.Member{Name: "q", Roles: []string{director.RoleOrigin}, Prefixes: []string{"/store"},
		Root: "q.example.org:1094", HTTPS: "https://q.example.org:8443"}, Director: region.httpsURL})
	args := []string{"federation", "approve", req, "--config", conf}
	members := func() int {
		ms, _ := director.ReadMembers(director.MembersFile(region.state))
		return len(ms)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	raw, err := exec.CommandContext(ctx, siteboxBin, args...).CombinedOutput() // stdin: /dev/null
	if err == nil || !strings.Contains(string(raw), "add --yes") || time.Since(start) > 10*time.Second || members() != 0 {
		t.Fatalf("approve without a terminal or --yes: %v after %v, %d members:\n%s", err, time.Since(start), members(), raw)
	}
	if !strings.Contains(string(raw), "root q.example.org:1094, https https://q.example.org:8443") {
		t.Errorf("approve did not show the endpoints before refusing:\n%s", raw)
	}

	out, err := runOnTerminal(t, "n\n", args...)
	if err == nil || !strings.Contains(out, "Approve q? [y/N]") || !strings.Contains(out, "q not approved") || members() != 0 {
		t.Errorf("answered n: %v, %d members:\n%s", err, members(), out)
	}
	out, err = runOnTerminal(t, "y\n", args...)
	if err != nil || !strings.Contains(out, "approved q (site -)") || members() != 1 {
		t.Errorf("answered y: %v, %d members:\n%s", err, members(), out)
	}
}

// runOnTerminal runs sitebox with a pseudo-terminal as its stdin, typing
// input there, and returns what it wrote to stdout and stderr.
func runOnTerminal(t *testing.T, input string, args ...string) (string, error) {
	t.Helper()
	master, slave, err := openPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, siteboxBin, args...)
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	go io.Copy(io.Discard, master) // the terminal's echo
	master.Write([]byte(input))
	err = cmd.Wait()
	return out.String(), err
}

// openPTY opens a pseudo-terminal pair.
func openPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("pty number: %w", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}
