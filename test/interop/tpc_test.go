package interop

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHTTPTPCGfal drives third-party copies with gfal2 (checksum-verified)
// between two boxes and between a box and XrdHttp 5.5, in pull and push
// mode, each side being the active one in turn.
func TestHTTPTPCGfal(t *testing.T) {
	bundle := tpcTrust(t)
	a := startBox(t, 1, tpcAllowLoopback...)
	b := startBox(t, 1, tpcAllowLoopback...)
	x := startXrdHTTP(t, a.certFile, filepath.Join(filepath.Dir(a.certFile), "key.pem"), a.certFile, b.certFile)
	trustCerts(t, bundle, a.certFile, b.certFile)
	data := writeRandom(t, filepath.Join(a.pools[0], "src.bin"), 9<<20+123)
	if err := os.WriteFile(filepath.Join(x.data, "src.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chown(filepath.Join(x.data, "src.bin"), xrootdUID(t), -1)
	cases := []struct {
		name, mode, src, dst, landed string
	}{
		{"box to box, pull", "pull", a.httpsURL + "/store/src.bin", b.httpsURL + "/store/pull.bin", filepath.Join(b.pools[0], "pull.bin")},
		{"box to box, push", "push", a.httpsURL + "/store/src.bin", b.httpsURL + "/store/d/push.bin", filepath.Join(b.pools[0], "d/push.bin")},
		{"box to XrdHttp, pull", "pull", a.httpsURL + "/store/src.bin", x.url + "/a2x-pull.bin", filepath.Join(x.data, "a2x-pull.bin")},
		{"box to XrdHttp, push", "push", a.httpsURL + "/store/src.bin", x.url + "/a2x-push.bin", filepath.Join(x.data, "a2x-push.bin")},
		{"XrdHttp to box, pull", "pull", x.url + "/src.bin", b.httpsURL + "/store/x2b-pull.bin", filepath.Join(b.pools[0], "x2b-pull.bin")},
		{"XrdHttp to box, push", "push", x.url + "/src.bin", b.httpsURL + "/store/x2b-push.bin", filepath.Join(b.pools[0], "x2b-push.bin")},
		{"box to box, default mode", "", a.httpsURL + "/store/src.bin", b.httpsURL + "/store/default.bin", filepath.Join(b.pools[0], "default.bin")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := gfalCopy(t, c.mode, c.src, c.dst)
			if err != nil {
				t.Fatalf("gfal-copy: %v\n%s", err, out)
			}
			sameFile(t, c.landed, data)
		})
	}
}

// TestHTTPTPCMarkers checks the reply to a raw COPY: 202, a marker stream
// ending in success, the file in place; and a refused COPY that leaves
// nothing behind.
func TestHTTPTPCMarkers(t *testing.T) {
	bundle := tpcTrust(t)
	a := startBox(t, 1, tpcAllowLoopback...)
	b := startBox(t, 1, tpcAllowLoopback...)
	trustCerts(t, bundle, a.certFile, b.certFile)
	data := writeRandom(t, filepath.Join(a.pools[0], "m.bin"), 3<<20)

	out := tpcCurl(t, b.certFile, b.httpsURL+"/store/m.bin", "Source: "+a.httpsURL+"/store/m.bin", "X-Number-Of-Streams: 4", "Credential: none")
	if !strings.HasSuffix(out, "success: Created\n") {
		t.Errorf("pull reply %q, want it to end in success", out)
	}
	sameFile(t, filepath.Join(b.pools[0], "m.bin"), data)

	out = tpcCurl(t, a.certFile, a.httpsURL+"/store/m.bin", "Destination: "+b.httpsURL+"/store/pushed.bin")
	if !strings.HasSuffix(out, "success: Created\n") {
		t.Errorf("push reply %q, want it to end in success", out)
	}
	sameFile(t, filepath.Join(b.pools[0], "pushed.bin"), data)

	// A missing source is refused before the reply starts, and the target
	// is not created.
	code, _ := run(t, true, "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", b.certFile, "-X", "COPY",
		"-H", "Source: "+a.httpsURL+"/store/missing.bin", b.httpsURL+"/store/never.bin")
	if code != "404" {
		t.Errorf("pull of a missing source: %s, want 404", code)
	}
	noFile(t, filepath.Join(b.pools[0], "never.bin"))
}

// TestHTTPTPCCutSource: a source that dies mid-copy gives a failure line
// in the marker stream and no file, partial or not, under the final name.
func TestHTTPTPCCutSource(t *testing.T) {
	b := startBox(t, 1, tpcAllowLoopback...)
	src := cutSource(t, 8<<20)
	out := tpcCurl(t, b.certFile, b.httpsURL+"/store/cut.bin", "Source: "+src+"/cut.bin")
	if !strings.Contains(out, "failure: ") || strings.Contains(out, "success") {
		t.Errorf("reply %q, want a failure line", out)
	}
	noFile(t, filepath.Join(b.pools[0], "cut.bin"))
	entries, _ := os.ReadDir(b.pools[0])
	for _, e := range entries {
		t.Errorf("left behind: %s", e.Name())
	}
}

func noFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s exists", path)
	}
}

// TestHTTPTPCPerfMarkers: a copy that takes longer than the marker
// interval streams performance markers in XrdHttp's format before its
// last line.
func TestHTTPTPCPerfMarkers(t *testing.T) {
	b := startBox(t, 1, tpcAllowLoopback...)
	data := make([]byte, 700_000)
	for i := range data {
		data[i] = byte(i)
	}
	src := slowSource(t, data)
	out := tpcCurl(t, b.certFile, b.httpsURL+"/store/slow.bin", "Source: "+src+"/slow.bin")
	marker := regexp.MustCompile(`Perf Marker\nTimestamp: \d+\nStripe Index: 0\nStripe Bytes Transferred: \d+\nTotal Stripe Count: 1\nEnd\n`)
	if !marker.MatchString(out) || !strings.HasSuffix(out, "success: Created\n") {
		t.Errorf("reply %q: want a performance marker, then success", out)
	}
	sameFile(t, filepath.Join(b.pools[0], "slow.bin"), data)
}
