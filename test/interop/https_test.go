package interop

import (
	"fmt"
	"hash/adler32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/test/peers"
)

func TestCurl(t *testing.T) {
	peers.Require(t, "curl")
	b := startBox(t, 1)
	data := writeRandom(t, filepath.Join(b.pools[0], "c.bin"), 1<<20)
	curl := func(args ...string) string {
		out, _ := run(t, false, "curl", append([]string{"-sS", "--fail-with-body", "--cacert", b.certFile}, args...)...)
		return out
	}
	u := b.httpsURL + "/store/c.bin"

	if got := curl("-r", "100-199", u); got != string(data[100:200]) {
		t.Errorf("single range: %d bytes", len(got))
	}
	multi := curl("-r", "0-9,1000-1009", "-D", "-", u)
	if !strings.Contains(multi, "multipart/byteranges") || !strings.Contains(multi, string(data[1000:1010])) || !strings.Contains(strings.ToLower(multi), "content-range: bytes 1000-1009/1048576") {
		t.Errorf("multiple ranges: %q", multi[:min(400, len(multi))])
	}
	head := curl("-I", "-H", "Want-Digest: adler32", u)
	if want := fmt.Sprintf("adler32=%08x", adler32.Checksum(data)); !strings.Contains(strings.ToLower(head), strings.ToLower("digest: "+want)) {
		t.Errorf("Want-Digest: %q, want %s", head, want)
	}
	if lh := strings.ToLower(head); !strings.Contains(lh, "content-length: 1048576") || !strings.Contains(lh, "etag:") || !strings.Contains(lh, "last-modified:") {
		t.Errorf("HEAD headers: %q", head)
	}
	pf := curl("-X", "PROPFIND", "-H", "Depth: 1", b.httpsURL+"/store/")
	if !strings.Contains(pf, "<D:href>/store/c.bin</D:href>") || !strings.Contains(pf, "<D:getcontentlength>1048576</D:getcontentlength>") {
		t.Errorf("PROPFIND depth 1: %q", pf)
	}
	pf0 := curl("-X", "PROPFIND", "-H", "Depth: 0", u)
	if strings.Count(pf0, "<D:response>") != 1 {
		t.Errorf("PROPFIND depth 0: %q", pf0)
	}

	src := filepath.Join(t.TempDir(), "up")
	up := writeRandom(t, src, 300000)
	curl("-T", src, b.httpsURL+"/store/new/dir/up.bin")
	sameFile(t, filepath.Join(b.pools[0], "new/dir/up.bin"), up)
	if got := curl(b.httpsURL + "/store/new/dir/up.bin"); got != string(up) {
		t.Error("GET after PUT differs")
	}
	// Bad paths are refused before any filesystem access.
	for _, p := range []string{"/store/%2e%2e/%2e%2e/etc/passwd", "/store/a%00b"} {
		out, err := run(t, true, "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", b.certFile, "--path-as-is", b.httpsURL+p)
		if err != nil || out != "400" {
			t.Errorf("GET %s: %v %q, want 400", p, err, out)
		}
	}
	out, _ := run(t, true, "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", b.certFile, "-T", src, b.httpsURL+"/pub/x")
	if out != "403" {
		t.Errorf("PUT to read-only export: %q, want 403", out)
	}
	if _, err := os.Stat(filepath.Join(b.pools[0], "x")); err == nil {
		t.Error("read-only PUT wrote a file")
	}
}

// curl MOVE and COPY whose Destination names the box as localhost while
// the request went to 127.0.0.1 are a move and a copy on the box (the
// certificate is for both names), not 502 or a copy to itself.
func TestDestinationByAnotherName(t *testing.T) {
	peers.Require(t, "curl")
	b := startBox(t, 1)
	os.WriteFile(filepath.Join(b.pools[0], "a"), []byte("data"), 0o644)
	other := strings.Replace(b.httpsURL, "127.0.0.1", "localhost", 1)
	for _, c := range []struct{ method, from, to string }{{"COPY", "/store/a", "/store/b"}, {"MOVE", "/store/b", "/store/c"}} {
		code, _ := run(t, true, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", b.certFile, "-X", c.method,
			"-H", "Destination: "+other+c.to, b.httpsURL+c.from)
		if code != "201" {
			t.Errorf("%s %s to %s%s: %s, want 201", c.method, c.from, other, c.to, code)
		}
	}
	if got, err := os.ReadFile(filepath.Join(b.pools[0], "c")); err != nil || string(got) != "data" {
		t.Errorf("after COPY and MOVE: %q %v", got, err)
	}
}
