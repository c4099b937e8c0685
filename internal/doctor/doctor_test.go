package doctor

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/config"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		statuses []Status
		want     int
	}{
		{"empty", nil, 0},
		{"ok and skip", []Status{StatusOK, StatusSkip}, 0},
		{"warning", []Status{StatusOK, StatusWarn}, 1},
		{"error", []Status{StatusWarn, StatusError, StatusOK}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{}
			for _, s := range tc.statuses {
				r.Checks = append(r.Checks, Check{Status: s})
			}
			if got := r.ExitCode(); got != tc.want {
				t.Errorf("ExitCode = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestText(t *testing.T) {
	r := &Report{Checks: []Check{
		{Group: "Ports", Name: "root:// :1094", Status: StatusOK, Summary: "listening"},
		{Group: "Ports", Name: "https:// :8443", Status: StatusError, Summary: "nothing listens", Explain: strings.Repeat("word ", 40), Fix: "start it"},
		{Group: "Slurm", Name: "slurm", Status: StatusSkip, Summary: "none"},
	}}
	got := r.Text()
	for _, want := range []string{"Ports\n  ✓ root:// :1094: listening\n  ✗ https:// :8443: nothing listens\n    why: word",
		"\n         word", "    fix: start it\n", "\nSlurm\n  - slurm: none\n", "1 ok, 0 warning(s), 1 error(s), 1 skipped"} {
		if !strings.Contains(got, want) {
			t.Errorf("text lacks %q:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if len([]rune(line)) > textWidth {
			t.Errorf("line longer than %d: %q", textWidth, line)
		}
	}
}

// TestRunHealthy is a box with real listeners, a valid certificate and
// room on its disks: every check passes or does not apply.
func TestRunHealthy(t *testing.T) {
	https, setDir := listenTLS(t)
	root := listenXRootD(t)
	cfg := baseConfig(t, root, https)
	cfg.Cache.Dir = t.TempDir()
	writeCert(t, filepath.Join(cfg.Server.StateDir, "tls"), time.Now().Add(-time.Hour), time.Now().Add(90*24*time.Hour), "127.0.0.1")
	setDir(filepath.Join(cfg.Server.StateDir, "tls"))
	r := Run(context.Background(), cfg, Options{ConfigName: "site.toml", Statfs: healthyFS, DiskFileSize: 1 << 20, NetworkSpeed: 1e6})
	if r.ExitCode() != 0 {
		t.Errorf("exit code %d:\n%s", r.ExitCode(), r.Text())
	}
	for _, g := range []string{"Config", "Ports", "This box on its ports", "Addresses", "Certificate", "Free space", "Writable directories", "Cache disk speed"} {
		cs := find(r, g)
		if len(cs) == 0 || cs[0].Status != StatusOK {
			t.Errorf("%s: %+v", g, cs)
		}
	}
	for _, g := range []string{"Directors and token issuers", "Slurm"} {
		if cs := find(r, g); len(cs) != 1 || cs[0].Status != StatusSkip {
			t.Errorf("%s: %+v", g, cs)
		}
	}
	t.Log("\n" + r.Text())
}

// TestRunBroken puts the problems together: config mistakes, a closed
// port, an expired certificate. The report must carry all of them, in
// group order, as JSON too.
func TestRunBroken(t *testing.T) {
	cfg := baseConfig(t, closedPort(t), config.Off)
	writeCert(t, filepath.Join(cfg.Server.StateDir, "tls"), time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour), "127.0.0.1")
	r := Run(context.Background(), cfg, Options{
		ConfigName:     "site.toml",
		ConfigProblems: []config.Problem{{Line: 6, Key: "export[1].pools", Msg: "pool /data: no such file or directory"}},
		Statfs:         healthyFS,
	})
	if r.ExitCode() != 2 {
		t.Errorf("exit code %d, want 2", r.ExitCode())
	}
	mustHave(t, r.Checks[0], StatusError, "site.toml: 1 problem(s)", "line 6: export[1].pools")
	mustHave(t, find(r, "Ports")[0], StatusError, "nothing listens on")
	mustHave(t, find(r, "Certificate")[0], StatusError, "expired on")
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil || len(back.Checks) != len(r.Checks) || back.Checks[0].Status != StatusError || back.Checks[0].Group != "Config" {
		t.Errorf("JSON round trip: %v %s", err, data)
	}
	if !strings.Contains(string(data), `"status":"error"`) || !strings.Contains(string(data), `"fix":`) {
		t.Errorf("JSON: %s", data)
	}
}
