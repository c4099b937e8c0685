package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"sitebox/test/bench"
)

// addLinkFlag adds --link-congestion to a command whose servers talk over
// the emulated link.
func addLinkFlag(cmd *cobra.Command) {
	cmd.Flags().String("link-congestion", "cubic", `TCP congestion control of the emulated link's sockets, set in a private network namespace the benchmark runs in ("host": the host's own, in the host's namespace)`)
}

// linkNamespace runs the benchmark in a private network namespace whose
// TCP congestion control is --link-congestion (see bench.LinkCongestion
// for why the host's may not do). It re-runs this command there and
// reports handled = true with the child's outcome; in the child, it sets
// the namespace up and lets the command go on. Where no namespace can be
// made (not root), the benchmark runs in the host's, and says so.
func linkNamespace(cmd *cobra.Command) (handled bool, err error) {
	cc, _ := cmd.Flags().GetString("link-congestion")
	if cc == "host" {
		return false, nil
	}
	if os.Getenv(bench.NetnsEnv) != "" {
		return false, setUpNamespace(cc)
	}
	self, err := os.Executable()
	if err != nil {
		return false, err
	}
	child := exec.Command(self, os.Args[1:]...)
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
	child.Env = append(os.Environ(), bench.NetnsEnv+"="+cc)
	child.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	// The child stops its servers on Ctrl-C itself; this process waits.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := child.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) {
			fmt.Fprintf(cmd.ErrOrStderr(), "sitebox-bench: no private network namespace (%v; needs root): the link runs over the host's loopback, TCP congestion control %q\n", err, bench.LinkCongestion())
			return false, nil
		}
		return true, fmt.Errorf("start the benchmark in a network namespace: %w", err)
	}
	go func() {
		for s := range sigs {
			child.Process.Signal(s)
		}
	}()
	err = child.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return true, childExit(ee.ExitCode())
	}
	return true, err
}

// setUpNamespace brings the new namespace's loopback up and sets its
// congestion control: the namespace's default, or where the host does
// not allow that one, its loopback routes'.
func setUpNamespace(cc string) error {
	if err := loopbackUp(); err != nil {
		return err
	}
	err := os.WriteFile("/proc/sys/net/ipv4/tcp_congestion_control", []byte(cc), 0)
	if errors.Is(err, syscall.EPERM) {
		// Not among the host's allowed ones (loopbackRoutesCongestion).
		if rerr := loopbackRoutesCongestion(cc); rerr != nil {
			err = fmt.Errorf("%v, nor on the loopback routes: %v", err, rerr)
		} else {
			err = nil
		}
	}
	if err != nil {
		avail, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
		return fmt.Errorf("--link-congestion %q: %v (available here: %s)", cc, err, strings.TrimSpace(string(avail)))
	}
	return nil
}

// loopbackUp brings up the loopback of a new namespace, which starts down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("network namespace: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("network namespace: loopback: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("network namespace: bring loopback up: %w", err)
	}
	return nil
}
