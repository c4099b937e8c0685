package interop

import (
	"context"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// Outcomes of the upstream test suites (XRootD's Python-bindings and
// shell tests, fsspec-xrootd's tests) run once against xrootd 5.5 and
// once against sitebox, keyed by test name.
type outcomes map[string]string

const passed = "passed"

// compareSuites fails the test for every case that passes against xrootd
// but not against sitebox, unless excluded names it with a reason. It
// also fails when xrootd passed nothing: a broken harness must not look
// like parity.
func compareSuites(t *testing.T, suite string, xr, sb outcomes, excluded map[string]string) {
	t.Helper()
	var names []string
	for k := range xr {
		names = append(names, k)
	}
	sort.Strings(names)
	xrPass, sbPass := 0, 0
	for _, k := range names {
		x, s := xr[k], sb[k]
		if s == "" {
			s = "missing"
		}
		if x == passed {
			xrPass++
		}
		if s == passed {
			sbPass++
		}
		reason, isExcluded := excluded[k]
		switch {
		case x == passed && s != passed && isExcluded:
			t.Logf("%s %s: excluded (%s): xrootd %s, sitebox %s", suite, k, reason, x, s)
		case x == passed && s != passed:
			t.Errorf("%s %s: passes against xrootd 5.5, %s against sitebox", suite, k, s)
		case isExcluded && s == passed:
			t.Logf("%s %s: now passes against sitebox; its exclusion (%s) can go", suite, k, reason)
		case x != s:
			t.Logf("%s %s: xrootd %s, sitebox %s", suite, k, x, s)
		case x != passed:
			t.Logf("%s %s: %s against both", suite, k, x)
		}
	}
	t.Logf("%s: %d/%d pass against xrootd 5.5, %d/%d against sitebox", suite, xrPass, len(names), sbPass, len(names))
	if xrPass == 0 {
		t.Errorf("%s: nothing passed against xrootd 5.5; the harness is broken", suite)
	}
}

// junitOutcomes reads pytest's --junitxml report.
func junitOutcomes(t *testing.T, file string) outcomes {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("pytest wrote no report: %v", err)
	}
	var doc struct {
		Cases []struct {
			Class   string    `xml:"classname,attr"`
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
			Error   *struct{} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("pytest report %s: %v", file, err)
	}
	out := outcomes{}
	for _, c := range doc.Cases {
		key := c.Class + "::" + c.Name
		switch {
		case c.Failure != nil:
			out[key] = "failed"
		case c.Error != nil:
			if out[key] == "" || out[key] == passed { // an error in teardown follows the call's own result
				out[key] = "error"
			}
		case c.Skipped != nil:
			out[key] = "skipped"
		default:
			out[key] = passed
		}
	}
	return out
}

// runPytest runs pytest in dir with SITEBOX_PYTHON and returns the
// per-test outcomes. prefix, when given, wraps the command (a network
// namespace, another user).
func runPytest(t *testing.T, dir string, env []string, prefix ...string) outcomes {
	t.Helper()
	py := python(t)
	if out, err := exec.Command(py, "-c", "import pytest").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pytest missing from %s (scripts/setup.sh installs it): %s", py, out)
		}
		t.Skipf("pytest missing from %s (run scripts/setup.sh)", py)
	}
	report := filepath.Join(dir, "report.xml")
	args := append(prefix, py, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q", "--junitxml="+report, ".")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "XRD_REQUESTTIMEOUT=15", "XRD_CONNECTIONRETRY=1", "XRD_STREAMTIMEOUT=15"), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("pytest in %s: %v\n%s", filepath.Base(dir), err, lastLines(string(out), 40))
	return junitOutcomes(t, report)
}

// copyTree copies the vendored suite src into a fresh directory so a run
// never writes into the source tree.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-r", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v %s", src, err, out)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// startXrootdSuitePeer runs xrootd 5.5 exporting "/" from a fresh data
// directory with adler32 and crc32c checksums configured.
func startXrootdSuitePeer(t *testing.T, data string) int {
	t.Helper()
	peers.Require(t, "xrootd")
	port, _ := peers.FreePort()
	x, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{
		DataDir: data, Port: port, Name: "interop-suite-" + strconv.Itoa(port), WorkDir: t.TempDir(),
		Extra: []string{"xrootd.chksum adler32 crc32c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		x.Stop()
		if t.Failed() {
			t.Logf("xrootd log:\n%s", lastLines(x.Log.String(), 40))
		}
	})
	return port
}
