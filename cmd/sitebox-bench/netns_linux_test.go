package main

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"sitebox/internal/bench"
)

// The namespace the link runs in has its loopback up and the congestion
// control asked for, while the host's stays as it was.
func TestSetUpNamespace(t *testing.T) {
	if os.Getenv("NETNS_CHILD") != "" {
		if err := setUpNamespace(os.Getenv("NETNS_CHILD")); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if got := bench.LinkCongestion(); got != os.Getenv("NETNS_CHILD") {
			t.Fatalf("congestion control %q, want %q", got, os.Getenv("NETNS_CHILD"))
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("a network namespace needs root")
	}
	host := bench.LinkCongestion()
	for _, cc := range []string{"cubic", "reno"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSetUpNamespace$", "-test.v")
		cmd.Env = append(os.Environ(), "NETNS_CHILD="+cc)
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "PASS") {
			t.Errorf("%s: %v\n%s", cc, err, out)
		}
	}
	if got := bench.LinkCongestion(); got != host {
		t.Errorf("host congestion control changed: %q, was %q", got, host)
	}
}

// An unknown congestion control is refused by name, with what the kernel
// offers.
func TestSetUpNamespaceUnknown(t *testing.T) {
	if os.Getenv("NETNS_CHILD_BAD") != "" {
		err := setUpNamespace("nosuch")
		if err == nil || !strings.Contains(err.Error(), `--link-congestion "nosuch"`) || !strings.Contains(err.Error(), "available here") {
			t.Fatalf("err = %v", err)
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("a network namespace needs root")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSetUpNamespaceUnknown$", "-test.v")
	cmd.Env = append(os.Environ(), "NETNS_CHILD_BAD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "PASS") {
		t.Errorf("%v\n%s", err, out)
	}
}
