package interop

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// httpsSlashCase is one request with curl; path is below the server's
// prefix, and the statuses are what each server answers.
type httpsSlashCase struct {
	method, path string
	hdr          []string // "Name: value"
	sitebox      int
	xrdhttp      int
	after        string // the namespace afterwards, as slashState reads it
	xrdhttpAfter string // when XrdHttp leaves something else (docs/webdav.md)
}

// httpsSlashCases: a path ending in "/" or "/." names a directory or
// nothing. XrdHttp 5.5 answers a file named that way with 500 (its code
// for ENOTDIR), sitebox with 409; neither touches the file.
var httpsSlashCases = []httpsSlashCase{
	{method: "GET", path: "/f/", sitebox: 409, xrdhttp: 500},
	{method: "GET", path: "/f/.", sitebox: 409, xrdhttp: 500},
	{method: "HEAD", path: "/f/", sitebox: 409, xrdhttp: 500},
	{method: "PROPFIND", path: "/f/", hdr: []string{"Depth: 0"}, sitebox: 409, xrdhttp: 500},
	{method: "PUT", path: "/f/", sitebox: 409, xrdhttp: 500},
	{method: "PUT", path: "/nx/", sitebox: 409, xrdhttp: 409, xrdhttpAfter: "f:5 d/ nx/"},
	{method: "DELETE", path: "/f/", sitebox: 409, xrdhttp: 500},
	{method: "DELETE", path: "/f/.", sitebox: 409, xrdhttp: 500},
	{method: "DELETE", path: "/d/.", sitebox: 400, xrdhttp: 500},
	{method: "MOVE", path: "/f/", hdr: []string{"Destination: {base}/g"}, sitebox: 409, xrdhttp: 500},
	{method: "MOVE", path: "/f", hdr: []string{"Destination: {base}/g/"}, sitebox: 409, xrdhttp: 500, xrdhttpAfter: "f:5 d/ g/"},
	{method: "GET", path: "/nx/", sitebox: 404, xrdhttp: 404},
	{method: "GET", path: "/d/", sitebox: 200, xrdhttp: 200},
	{method: "PROPFIND", path: "/", hdr: []string{"Depth: 1"}, sitebox: 207, xrdhttp: 207},
	{method: "PROPFIND", path: "/d/.", hdr: []string{"Depth: 0"}, sitebox: 207, xrdhttp: 207},
	{method: "MKCOL", path: "/nx/", sitebox: 201, xrdhttp: 201, after: "f:5 d/ nx/"},
	{method: "MOVE", path: "/d/", hdr: []string{"Destination: {base}/d2"}, sitebox: 201, xrdhttp: 201, after: "f:5 d2/"},
	{method: "MOVE", path: "/d", hdr: []string{"Destination: {base}/d2/"}, sitebox: 201, xrdhttp: 201, after: "f:5 d2/"},
	{method: "DELETE", path: "/d/", sitebox: 204, xrdhttp: 200, after: "f:5"},
}

// TestHTTPSTrailingSlash sends httpsSlashCases with curl to XrdHttp 5.5
// and to a box, each on a fresh file f ("hello") and directory d, and
// checks the answers and what is left. A DELETE of "f/." whose redirects
// are followed must not reach f either.
func TestHTTPSTrailingSlash(t *testing.T) {
	peers.Require(t, "curl")
	b := startBox(t, 1)
	x := startXrdHTTP(t, b.certFile, filepath.Join(filepath.Dir(b.certFile), "key.pem"))
	for _, s := range []struct{ name, base, data string }{
		{"xrdhttp", x.url, x.data},
		{"sitebox", b.httpsURL + "/store", b.pools[0]},
	} {
		t.Run(s.name, func(t *testing.T) {
			for _, c := range httpsSlashCases {
				slashFixture(t, b.certFile, s.base, s.data)
				want, after := c.sitebox, c.after
				if s.name == "xrdhttp" {
					want = c.xrdhttp
					if c.xrdhttpAfter != "" {
						after = c.xrdhttpAfter
					}
				}
				if after == "" {
					after = "f:5 d/"
				}
				args := []string{"--path-as-is", "-X", c.method}
				if c.method == "HEAD" {
					args = []string{"--path-as-is", "-I"} // curl waits for a body after -X HEAD
				}
				for _, h := range c.hdr {
					args = append(args, "-H", strings.ReplaceAll(h, "{base}", s.base))
				}
				got := curlStatus(t, b.certFile, s.base+c.path, args...)
				if got != want {
					t.Errorf("%s %s: %d, want %d", c.method, c.path, got, want)
				}
				if st := slashState(s.data); st != after {
					t.Errorf("%s %s: afterwards %q, want %q", c.method, c.path, st, after)
				}
			}
			slashFixture(t, b.certFile, s.base, s.data)
			curlStatus(t, b.certFile, s.base+"/f/.", "--path-as-is", "-L", "-X", "DELETE")
			if st := slashState(s.data); st != "f:5 d/" {
				t.Errorf("DELETE f/. following redirects: afterwards %q", st)
			}
		})
	}
}

// TestGfalMkdirExisting runs gfal-mkdir on an existing directory against
// XrdHttp 5.5 and a box. gfal2's http plugin sends MKCOL alone and takes
// 405 for EEXIST. XrdHttp turns MKCOL into kXR_mkdir with mode 0700, and
// xrootd accepts a mkdir of a directory with that very mode, so XrdHttp
// answers 201 for a directory MKCOL made and 405 for others; a box keeps
// RFC 4918's 405 for all (docs/webdav.md). gfal-mkdir -p succeeds on
// both.
func TestGfalMkdirExisting(t *testing.T) {
	peers.Require(t, "gfal-mkdir")
	b := startBox(t, 1)
	x := startXrdHTTP(t, b.certFile, filepath.Join(filepath.Dir(b.certFile), "key.pem"))
	for _, s := range []struct {
		name, base, data string
		again            int // gfal-mkdir's exit code the second time
	}{
		{"xrdhttp", x.url, x.data, 0},
		{"sitebox", b.httpsURL + "/store", b.pools[0], 17},
	} {
		t.Run(s.name, func(t *testing.T) {
			if rc := gfalMkdir(t, s.base+"/m"); rc != 0 {
				t.Fatalf("gfal-mkdir of a new directory: exit %d", rc)
			}
			if rc := gfalMkdir(t, s.base+"/m"); rc != s.again {
				t.Errorf("gfal-mkdir of the directory it made: exit %d, want %d", rc, s.again)
			}
			if rc := gfalMkdir(t, "-p", s.base+"/m"); rc != 0 {
				t.Errorf("gfal-mkdir -p of an existing directory: exit %d, want 0", rc)
			}
			os.Mkdir(filepath.Join(s.data, "other"), 0o755)
			if rc := gfalMkdir(t, s.base+"/other"); rc != 17 {
				t.Errorf("gfal-mkdir of a directory made with mode 0755: exit %d, want 17 (EEXIST)", rc)
			}
		})
	}
}

// slashFixture leaves base holding only a file f ("hello") and an empty
// directory d, made over https so the server owns them.
func slashFixture(t *testing.T, cacert, base, data string) {
	t.Helper()
	entries, _ := os.ReadDir(data)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(data, e.Name()))
	}
	if got := curlStatus(t, cacert, base+"/f", "-X", "PUT", "--data-binary", "hello"); got/100 != 2 {
		t.Fatalf("PUT f: %d", got)
	}
	if got := curlStatus(t, cacert, base+"/d", "-X", "MKCOL"); got != 201 {
		t.Fatalf("MKCOL d: %d", got)
	}
}

// slashState lists f, d, g, d2 and nx as they are on disk: "f:SIZE" for
// a file, "d/" for a directory.
func slashState(data string) string {
	var out []string
	for _, n := range []string{"f", "d", "g", "d2", "nx"} {
		fi, err := os.Stat(filepath.Join(data, n))
		switch {
		case err != nil:
		case fi.IsDir():
			out = append(out, n+"/")
		default:
			out = append(out, n+":"+strconv.FormatInt(fi.Size(), 10))
		}
	}
	return strings.Join(out, " ")
}

// curlStatus runs curl on url and returns the HTTP status.
func curlStatus(t *testing.T, cacert, url string, args ...string) int {
	t.Helper()
	out, err := run(t, true, "curl", append([]string{"-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", cacert}, append(args, url)...)...)
	code, cerr := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || cerr != nil || code == 0 {
		t.Fatalf("curl %v %s: %v %q", args, url, err, out)
	}
	return code
}

// gfalMkdir runs gfal-mkdir and returns its exit code.
func gfalMkdir(t *testing.T, args ...string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "gfal-mkdir", append([]string{"-D", "HTTP PLUGIN:INSECURE=true"}, args...)...)
	cmd.Env = append(os.Environ(), "BEARER_TOKEN=mkdir-test", "GFAL_PYTHONBIN=/usr/bin/python3")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		t.Logf("gfal-mkdir %v: %s", args, strings.TrimSpace(string(out)))
		return ee.ExitCode()
	}
	t.Fatalf("gfal-mkdir %v: %v\n%s", args, err, out)
	return -1
}
