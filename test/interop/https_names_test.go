package interop

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// Names the listings are checked with. Sub-delims, ":" and "@" may stand
// for themselves in a URL path (RFC 3986 pchar); a space, "%" and
// non-ASCII bytes may not.
var (
	namesAsThey   = []string{"it's(1).txt", "a+b,c;d=e&f$g!*.txt", "x:y@z.txt"}
	namesEscaped  = []string{"a b.txt", "bü.txt", "p%41q.txt"}
	nameDir       = "d(1)"
	nameInDir     = "o'k.txt"
	gfalLsLine    = regexp.MustCompile(`^(\S)\S*\s+\S+\s+\S+\s+\S+\s+(\d+)\s+\S+\s+\S+\s+\S+ (.*)$`)
	gfalInsecure  = []string{"-D", "HTTP PLUGIN:INSECURE=true"}
	davixInsecure = "-k"
)

// TestHTTPSListingNames lists and copies a tree of awkward names with
// davix-ls, gfal-ls -l and gfal-copy -r from XrdHttp 5.5 and from a box
// side by side. Both list names made of sub-delims as they are (the box
// no longer escapes "'", "(", ")", "!", "*"); the box escapes what a URL
// path cannot hold (space, "%", UTF-8), which XrdHttp sends raw, so that
// gfal-copy -r copies those files too, under their escaped names, where
// it fails on XrdHttp's. A collection's getcontentlength is its
// directory's size on both, as gfal-ls -l shows it.
func TestHTTPSListingNames(t *testing.T) {
	for _, tool := range []string{"davix-ls", "gfal-ls", "gfal-copy", "xrootd"} {
		peers.Require(t, tool)
	}
	b := startBox(t, 1)
	x := startXrdHTTP(t, b.certFile, filepath.Join(filepath.Dir(b.certFile), "key.pem"))
	all := append(append([]string{}, namesAsThey...), namesEscaped...)
	listed := map[string]map[string]string{} // server → listed name → gfal-ls -l size
	for _, s := range []struct{ name, url, data string }{
		{"xrdhttp", x.url + "/names", filepath.Join(x.data, "names")},
		{"sitebox", b.httpsURL + "/store/names", filepath.Join(b.pools[0], "names")},
	} {
		for _, n := range all {
			writeFileAt(t, filepath.Join(s.data, n), n)
		}
		writeFileAt(t, filepath.Join(s.data, nameDir, nameInDir), nameInDir)
		t.Run(s.name, func(t *testing.T) {
			davix, err := toolOut(t, "davix-ls", davixInsecure, s.url+"/")
			if err != nil {
				t.Fatalf("davix-ls: %v\n%s", err, davix)
			}
			gfal, err := toolOut(t, "gfal-ls", append(gfalInsecure, "-l", s.url+"/")...)
			if err != nil {
				t.Fatalf("gfal-ls -l: %v\n%s", err, gfal)
			}
			sizes := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(gfal), "\n") {
				if m := gfalLsLine.FindStringSubmatch(strings.TrimRight(l, "\t ")); m != nil {
					sizes[m[3]] = m[2]
				}
			}
			listed[s.name] = sizes
			davixNames := strings.Split(strings.TrimSpace(davix), "\n")
			for _, n := range namesAsThey {
				if _, ok := sizes[n]; !ok {
					t.Errorf("gfal-ls -l does not show %q as it is:\n%s", n, gfal)
				}
				if !contains(davixNames, n) {
					t.Errorf("davix-ls does not show %q as it is:\n%s", n, davix)
				}
			}
			dirSize := sizes[nameDir]
			if fi, err := os.Stat(filepath.Join(s.data, nameDir)); err != nil || dirSize != strconv.FormatInt(fi.Size(), 10) || dirSize == "0" {
				t.Errorf("gfal-ls -l shows %s with size %q, want its directory's %d", nameDir, dirSize, fi.Size())
			}
			local := filepath.Join(t.TempDir(), "copy")
			out, err := toolOut(t, "gfal-copy", append(gfalInsecure, "-r", s.url, "file://"+local)...)
			if s.name == "xrdhttp" {
				// XrdHttp's hrefs with a space or UTF-8 are no URLs: gfal
				// cannot fetch those files.
				t.Logf("gfal-copy -r from XrdHttp: %v\n%s", err, tail(out, 2000))
				return
			}
			if err != nil {
				t.Fatalf("gfal-copy -r: %v\n%s", err, out)
			}
			checkCopied(t, local, sizes, davixNames)
		})
	}
	for _, n := range namesAsThey {
		if _, ok := listed["xrdhttp"][n]; !ok {
			t.Errorf("XrdHttp's gfal-ls -l does not show %q as it is either", n)
		}
	}
	t.Run("cache", func(t *testing.T) { listThroughCache(t, b, all) })
}

// listThroughCache lists the box's tree through a cache whose upstream
// is the box's https://: the cache reads each href once (a name with
// "%41" stays one) and lists the names as the box does, over https://
// and over root://.
func listThroughCache(t *testing.T, origin *box, names []string) {
	c := startCache(t, cacheConf{dir: t.TempDir(), routes: []cacheRoute{{"/store", []string{origin.httpsURL}}},
		extra: []string{"upstream_insecure = true"}})
	direct, err := toolOut(t, "davix-ls", davixInsecure, origin.httpsURL+"/store/names/")
	if err != nil {
		t.Fatalf("davix-ls: %v\n%s", err, direct)
	}
	cached, err := toolOut(t, "davix-ls", davixInsecure, c.httpsURL+"/store/names/")
	if err != nil || cached != direct {
		t.Errorf("davix-ls through the cache: %v\n%s\nwant what the origin lists:\n%s", err, cached, direct)
	}
	ls, _ := run(t, false, "xrdfs", c.rootHost, "ls", "/store/names")
	for _, n := range append(names, nameDir) {
		if !contains(strings.Split(ls, "\n"), "/store/names/"+n) {
			t.Errorf("xrdfs ls through the cache does not list %q:\n%s", n, ls)
		}
	}
}

// checkCopied checks that gfal-copy -r wrote every file of the box's
// tree: names with sub-delims as they are, the others as the box's hrefs
// escape them (gfal2 writes a local file by the name it listed).
func checkCopied(t *testing.T, local string, gfalNames map[string]string, davixNames []string) {
	t.Helper()
	for _, n := range namesEscaped {
		esc := strings.TrimPrefix((&url.URL{Path: "/" + n}).EscapedPath(), "/")
		if dec, _ := url.PathUnescape(esc); dec != n {
			t.Fatalf("escaping %q", n)
		}
		if _, ok := gfalNames[esc]; !ok || !contains(davixNames, esc) {
			t.Errorf("%q is not listed as %q by gfal-ls and davix-ls", n, esc)
		}
		if got, err := os.ReadFile(filepath.Join(local, esc)); err != nil || string(got) != n {
			t.Errorf("gfal-copy -r: %s: %q %v", esc, got, err)
		}
	}
	for _, n := range namesAsThey {
		if got, err := os.ReadFile(filepath.Join(local, n)); err != nil || string(got) != n {
			t.Errorf("gfal-copy -r: %s: %q %v", n, got, err)
		}
	}
	if got, err := os.ReadFile(filepath.Join(local, nameDir, nameInDir)); err != nil || string(got) != nameInDir {
		t.Errorf("gfal-copy -r: %s/%s: %q %v", nameDir, nameInDir, got, err)
	}
}

// toolOut runs a gfal2 or davix tool and returns its output and error.
func toolOut(t *testing.T, tool string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Env = os.Environ()
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		// gfal2-util looks for "python", which Debian 12 lacks.
		cmd.Env = append(cmd.Env, "GFAL_PYTHONBIN=/usr/bin/python3")
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeFileAt(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// contains reports whether a line of a tool's output is s.
func contains(lines []string, s string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.TrimSpace(l) == s })
}
