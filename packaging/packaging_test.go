// Package packaging holds the systemd units and sample configs; its test
// keeps the samples valid as the config evolves.
package packaging

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/config"
)

// Every sample config parses with no unknown key and no problem but the
// files and directories a real machine would have (a grid site's vomsdir
// lists the VOs its namespaces name).
func TestSampleConfigs(t *testing.T) {
	files, _ := filepath.Glob("config/*.toml")
	if len(files) < 4 {
		t.Fatalf("samples: %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cfg, _, err := config.Load(f)
			var ps *config.Problems
			if err != nil && !errors.As(err, &ps) {
				t.Fatal(err)
			}
			if cfg == nil {
				t.Fatalf("%s did not load: %v", f, err)
			}
			if ps == nil {
				return
			}
			for _, p := range ps.List {
				if strings.Contains(p.Msg, "cannot read") || strings.Contains(p.Msg, "does not exist") || strings.Contains(p.Msg, "no such file") ||
					strings.Contains(p.Msg, "<voms host>.lsc") {
					continue // the machine's paths
				}
				t.Errorf("%s: %v", f, p)
			}
		})
	}
}
