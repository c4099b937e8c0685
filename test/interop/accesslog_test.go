package interop

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// accessLine is a JSON access-log line.
type accessLine struct {
	Proto  string  `json:"proto"`
	Op     string  `json:"op"`
	Client string  `json:"client"`
	Path   string  `json:"path"`
	Bytes  int64   `json:"bytes"`
	Secs   float64 `json:"duration_s"`
	Result string  `json:"result"`
}

// readAccessLog parses every line of the JSON access log, failing on a
// line that is not JSON or repeats a key.
func readAccessLog(t *testing.T, file string) []accessLine {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []accessLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &keys); err != nil {
			t.Fatalf("access log line is not JSON: %v: %s", err, sc.Text())
		}
		for k := range keys {
			if strings.Count(sc.Text(), `"`+k+`":`) != 1 {
				t.Errorf("key %q repeated in %s", k, sc.Text())
			}
		}
		var l accessLine
		json.Unmarshal(sc.Bytes(), &l)
		out = append(out, l)
	}
	return out
}

// TestAccessLog: one line per transfer, its bytes those xrdcp and curl
// moved.
func TestAccessLog(t *testing.T) {
	for _, tool := range []string{"xrdcp", "curl"} {
		peers.Require(t, tool)
	}
	logFile := filepath.Join(t.TempDir(), "access.log")
	b := startBox(t, 1, "--access-log", logFile, "--access-log-format", "json")
	data := writeRandom(t, filepath.Join(b.pools[0], "a.bin"), 3<<20+5)
	dir := t.TempDir()
	run(t, false, "xrdcp", "-f", b.rootURL+"//store/a.bin", dir+"/a")
	sameFile(t, dir+"/a", data)
	up := writeRandom(t, dir+"/up", 1<<20+7)
	run(t, false, "xrdcp", "-f", dir+"/up", b.rootURL+"//store/up.bin")
	run(t, false, "curl", "-sS", "-f", "--cacert", b.certFile, "-o", dir+"/c", b.httpsURL+"/store/a.bin")
	sameFile(t, dir+"/c", data)
	run(t, false, "curl", "-sS", "-f", "--cacert", b.certFile, "-T", dir+"/up", b.httpsURL+"/store/up2.bin")
	run(t, true, "curl", "-sS", "--cacert", b.certFile, "-o", os.DevNull, b.httpsURL+"/store/missing.bin")

	want := []accessLine{
		{Proto: "root", Op: "read", Path: "/store/a.bin", Bytes: int64(len(data)), Result: "ok"},
		{Proto: "root", Op: "write", Path: "/store/up.bin", Bytes: int64(len(up)), Result: "ok"},
		{Proto: "https", Op: "GET", Path: "/store/a.bin", Bytes: int64(len(data)), Result: "ok"},
		{Proto: "https", Op: "PUT", Path: "/store/up2.bin", Bytes: int64(len(up)), Result: "ok"},
		{Proto: "https", Op: "GET", Path: "/store/missing.bin", Result: "404 Not Found"},
	}
	var got []accessLine
	waitFor(t, 10*time.Second, "five access-log lines", func() bool {
		got = readAccessLog(t, logFile)
		return len(got) >= len(want)
	})
	for _, w := range want {
		found := false
		for _, g := range got {
			if g.Proto == w.Proto && g.Op == w.Op && g.Path == w.Path {
				found = true
				if g.Result != w.Result || (w.Result == "ok" && g.Bytes != w.Bytes) || g.Client != "127.0.0.1" || g.Secs < 0 {
					t.Errorf("access log %s %s %s: %+v, want %d bytes, result %q, client 127.0.0.1", w.Proto, w.Op, w.Path, g, w.Bytes, w.Result)
				}
			}
		}
		if !found {
			t.Errorf("no access-log line for %s %s %s in %+v", w.Proto, w.Op, w.Path, got)
		}
	}
}

// TestJSONLogsHaveNoDuplicateKeys: every JSON log line of a box serving
// root:// and https (debug level, so every component speaks) names each
// key once.
func TestJSONLogsHaveNoDuplicateKeys(t *testing.T) {
	for _, tool := range []string{"xrdcp", "curl"} {
		peers.Require(t, tool)
	}
	b := startBox(t, 1, "--log-format", "json", "--log-level", "debug")
	data := writeRandom(t, filepath.Join(b.pools[0], "a.bin"), 100_000)
	dir := t.TempDir()
	run(t, false, "xrdcp", "-f", b.rootURL+"//store/a.bin", dir+"/a")
	sameFile(t, dir+"/a", data)
	run(t, true, "xrdcp", "-f", b.rootURL+"//store/missing.bin", dir+"/m")
	run(t, false, "curl", "-sS", "-f", "--cacert", b.certFile, "-o", dir+"/c", b.httpsURL+"/store/a.bin")
	b.proc.Stop()
	lines := 0
	for _, line := range strings.Split(b.proc.Log.String(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		lines++
		dec := json.NewDecoder(strings.NewReader(line))
		if _, err := dec.Token(); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatalf("not JSON: %v: %s", err, line)
			}
			key := k.(string)
			if seen[key] {
				t.Errorf("key %q twice in %s", key, line)
			}
			seen[key] = true
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatalf("not JSON: %v: %s", err, line)
			}
		}
	}
	if lines < 5 {
		t.Errorf("only %d JSON log lines:\n%s", lines, b.proc.Log.String())
	}
}
