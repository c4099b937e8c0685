package main

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"sitebox/test/bench"
)

// runInNamespace re-runs test in a new network namespace with env
// (NAME=value) set, and fails unless it passes there.
func runInNamespace(t *testing.T, test, env string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "PASS") {
		t.Errorf("%s: %v\n%s", env, err, out)
	}
}

func needRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a network namespace needs root")
	}
}

// The namespace the link runs in has its loopback up and the congestion
// control asked for, while the host's stays as it was.
func TestSetUpNamespace(t *testing.T) {
	if cc := os.Getenv("NETNS_CHILD"); cc != "" {
		if err := setUpNamespace(cc); err != nil {
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
		if got := bench.LinkCongestion(); got != cc {
			t.Fatalf("congestion control %q, want %q", got, cc)
		}
		return
	}
	needRoot(t)
	host := bench.LinkCongestion()
	for _, cc := range []string{"cubic", "reno"} {
		runInNamespace(t, "TestSetUpNamespace", "NETNS_CHILD="+cc)
	}
	if got := bench.LinkCongestion(); got != host {
		t.Errorf("host congestion control changed: %q, was %q", got, host)
	}
}

// The loopback routes carry their own congestion control, whatever the
// namespace's default (which a host may not let a namespace change: its
// net.ipv4.tcp_allowed_congestion_control).
func TestLoopbackRoutesCongestion(t *testing.T) {
	if os.Getenv("NETNS_CHILD_ROUTES") != "" {
		if err := loopbackUp(); err != nil {
			t.Fatal(err)
		}
		def, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")
		for _, cc := range []string{"reno", "cubic"} {
			if err := loopbackRoutesCongestion(cc); err != nil {
				t.Fatal(err)
			}
			if got := bench.LinkCongestion(); got != cc {
				t.Fatalf("congestion control %q, want %q", got, cc)
			}
		}
		if now, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control"); string(now) != string(def) {
			t.Errorf("the namespace's default changed: %q, was %q", now, def)
		}
		if err := loopbackRoutesCongestion("nosuch"); err == nil || !strings.Contains(err.Error(), "congctl nosuch") {
			t.Errorf("unknown congestion control: err = %v", err)
		}
		return
	}
	needRoot(t)
	runInNamespace(t, "TestLoopbackRoutesCongestion", "NETNS_CHILD_ROUTES=1")
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
	needRoot(t)
	runInNamespace(t, "TestSetUpNamespaceUnknown", "NETNS_CHILD_BAD=1")
}
