package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitebox/test/peers"
)

// TestReloadDuringTransfer: `systemctl reload` (SIGHUP) while xrdcp
// reads a file: the transfer goes on to the end, byte-identical, and the
// access log the new config turns on records it and what follows. A
// reload that changes a listener, or a config that does not pass
// `config check`, is refused with a log line naming why, and the box
// keeps serving.
func TestReloadDuringTransfer(t *testing.T) {
	peers.Require(t, "xrdcp")
	peers.Require(t, "xrdfs")
	pool := t.TempDir()
	data := writeRandom(t, filepath.Join(pool, "slow.bin"), 8<<20)
	n := startFedNode(t, "reloaded", "R", "[[export]]\nprefix = \"/store\"\npools = ["+quote(pool)+"]\n")
	file := filepath.Join(n.state, "sitebox.toml")
	orig, _ := os.ReadFile(file)
	hup := func(conf string, want string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		before := strings.Count(n.proc.Log.String(), "msg=reload:") + strings.Count(n.proc.Log.String(), "msg=\"reload")
		syscall.Kill(n.proc.Cmd.Process.Pid, syscall.SIGHUP)
		waitFor(t, 10*time.Second, "the reload answered: "+want, func() bool {
			log := n.proc.Log.String()
			return strings.Count(log, "msg=reload:")+strings.Count(log, "msg=\"reload") > before && strings.Contains(log, want)
		})
	}

	out := t.TempDir()
	slow := exec.Command("xrdcp", "-f", "--xrate", "1M", n.rootURL+"//store/slow.bin", out+"/slow")
	slow.Env = append(os.Environ(), "XRD_REQUESTTIMEOUT=30", "XRD_CONNECTIONRETRY=1")
	var slowOut strings.Builder
	slow.Stdout, slow.Stderr = &slowOut, &slowOut
	if err := slow.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- slow.Wait() }()
	t.Cleanup(func() { slow.Process.Kill() })
	waitFor(t, 10*time.Second, "the slow copy under way", func() bool {
		return strings.Contains(n.proc.Log.String(), "msg=open component=root")
	})

	// Live: the access log turned on, the log level lowered.
	access := filepath.Join(t.TempDir(), "access.log")
	conf := strings.Replace(string(orig), "log_level = \"debug\"\n", "log_level = \"info\"\naccess_log = "+quote(access)+"\n", 1)
	hup(conf, "changed=\"server.access_log, server.log_level\"")
	select {
	case err := <-done:
		t.Fatalf("the copy ended during the reload: %v\n%s", err, slowOut.String())
	default:
	}
	if err := <-done; err != nil {
		t.Fatalf("xrdcp across the reload: %v\n%s", err, slowOut.String())
	}
	sameFile(t, out+"/slow", data)
	run(t, false, "xrdcp", "-f", n.rootURL+"//store/slow.bin", out+"/again")
	waitFor(t, 5*time.Second, "both copies in the access log", func() bool {
		b, _ := os.ReadFile(access)
		return strings.Count(string(b), "/store/slow.bin") == 2
	})

	// Needs a restart: refused, named, and the box keeps serving.
	moved := strings.Replace(conf, "[root]\naddr = \""+n.rootHost+"\"", "[root]\naddr = \"127.0.0.1:1\"", 1)
	hup(moved, "root.addr changed")
	if !strings.Contains(n.proc.Log.String(), "still running on the old config") {
		t.Errorf("the refusal does not say the box keeps its config:\n%s", tail(n.proc.Log.String(), 2000))
	}
	// Does not pass config check: refused with the problem.
	hup(strings.Replace(conf, "log_level = \"info\"", "log_level = \"loud\"", 1), "does not pass `sitebox config check`")
	if !strings.Contains(n.proc.Log.String(), "not a log level") {
		t.Errorf("the refusal does not name the problem:\n%s", tail(n.proc.Log.String(), 2000))
	}
	run(t, false, "xrdfs", n.rootHost, "stat", "/store/slow.bin")
}
