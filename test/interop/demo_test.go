package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// readmeCommands are the two commands the README's first lines give a new
// user: the demo's and the whole suite's.
func readmeCommands(t *testing.T) (demo, suite string) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > 6 {
		lines = lines[:6]
	}
	for _, l := range lines {
		cmd, _, _ := strings.Cut(strings.TrimSpace(l), "#")
		cmd = strings.TrimSpace(cmd)
		switch {
		case strings.Contains(l, "run the demo"):
			demo = cmd
		case strings.Contains(l, "run every test"):
			suite = cmd
		}
	}
	if demo == "" || suite == "" {
		t.Fatalf("the README's first lines do not give the demo and test commands:\n%s", strings.Join(lines, "\n"))
	}
	return demo, suite
}

// CI runs the README's test command, as printed.
func TestCIRunsTheReadmeCommand(t *testing.T) {
	_, suite := readmeCommands(t)
	b, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^exec ` + regexp.QuoteMeta(suite) + `\s*$`).Match(b) {
		t.Errorf(".ci/run does not run the README's test command %q:\n%s", suite, b)
	}
}

// TestDemo runs the README's demo command exactly as printed, in a fresh
// clone of this repository (its committed state), with none of the
// suite's variables, as a new user would: every copy it makes is
// identical to its original, and the T3 site box — origin, cache,
// director and (as root) job router — runs in one process from one
// config.
func TestDemo(t *testing.T) {
	for _, tool := range []string{"git", "go", "xrdcp", "xrdfs", "curl", "python3"} {
		peers.Require(t, tool)
	}
	demo, _ := readmeCommands(t)
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "sitebox")
	if out, err := exec.Command("git", "clone", "--quiet", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v: %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", demo)
	cmd.Dir = clone
	cmd.Env = newUserEnv()
	cmd.WaitDelay = 10 * time.Second
	outB, err := cmd.CombinedOutput()
	out := string(outB)
	if err != nil {
		t.Fatalf("%s: %v\n%s", demo, err, out)
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

// newUserEnv is this process's environment without what the suite sets
// for itself (scripts/test.sh's SITEBOX_* and the bin/ it puts first on
// PATH): a new user's shell has none of it.
func newUserEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "SITEBOX_"):
			continue
		case k == "PATH":
			var keep []string
			for _, dir := range filepath.SplitList(v) {
				if _, err := os.Stat(filepath.Join(dir, "sitebox")); err != nil {
					keep = append(keep, dir)
				}
			}
			kv = "PATH=" + strings.Join(keep, string(filepath.ListSeparator))
		}
		env = append(env, kv)
	}
	return env
}
