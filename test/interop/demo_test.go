package interop

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"sitebox/internal/testpeers"
)

// TestDemo runs scripts/demo.sh as a new user would, with the binary
// under test: every copy it makes is identical to its original, and the
// T3 site box — origin, cache, director and (as root) job router — runs
// in one process from one config.
func TestDemo(t *testing.T) {
	for _, tool := range []string{"xrdcp", "xrdfs", "curl", "python3"} {
		testpeers.Require(t, tool)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "../../scripts/demo.sh")
	cmd.Env = append(os.Environ(), "SITEBOX_DEMO_SETUP=no", "SITEBOX_BIN="+siteboxBin)
	cmd.WaitDelay = 10 * time.Second
	outB, err := cmd.CombinedOutput()
	out := string(outB)
	if err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	if n := strings.Count(out, "identical to the original"); n != 7 {
		t.Errorf("%d copies identical to their original; want 7\n%s", n, out)
	}
	for _, want := range []string{
		"in one process from one config", "sitebox.toml: ok", "approved b-origin",
		"the site cache has read 32 MiB from site B", "HTTP 200 after 1 redirect(s)", "Demo finished",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo's output lacks %q\n%s", want, out)
		}
	}
	for _, row := range []string{`t3-origin\s+origin`, `t3-cache\s+cache`, `b-origin\s+origin`} {
		if !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("the director's view lacks a row %s\n%s", row, out)
		}
	}
	if os.Geteuid() == 0 && !strings.Contains(out, ": completed") {
		t.Errorf("the job on the site box did not complete\n%s", out)
	}
}
