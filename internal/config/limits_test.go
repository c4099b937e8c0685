package config

import (
	"errors"
	"testing"
	"time"
)

// The [root] limits reach the root:// server's configuration; values that
// are no limit or no duration are reported by key.
func TestRootLimits(t *testing.T) {
	dir := t.TempDir()
	export := "[[export]]\nprefix = \"/store\"\npools = [\"" + dir + "\"]\n"
	cfg, _, err := Parse("ok.toml", []byte(`[root]
max_sessions_per_network = 100
max_open_files_per_network = -1
idle_timeout = "90s"
`+export))
	if err != nil {
		t.Fatal(err)
	}
	rc := cfg.Root.Config()
	if rc.Limits.SessionsPerNetwork != 100 || rc.Limits.OpenFilesPerNetwork != -1 || rc.IdleTimeout != 90*time.Second {
		t.Fatalf("server config %+v, idle timeout %v", rc.Limits, rc.IdleTimeout)
	}

	_, _, err = Parse("bad.toml", []byte(`[root]
max_sessions_per_network = -2
max_open_files_per_network = -5
idle_timeout = "10ms"
`+export))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse error = %v, want *Problems", err)
	}
	got := map[string]bool{}
	for _, p := range ps.List {
		got[p.Key] = true
	}
	for _, k := range []string{"root.max_sessions_per_network", "root.max_open_files_per_network", "root.idle_timeout"} {
		if !got[k] {
			t.Errorf("no problem reported for %s: %v", k, ps.List)
		}
	}
}
