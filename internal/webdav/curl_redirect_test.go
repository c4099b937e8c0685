package webdav

import (
	"bytes"
	"fmt"
	"hash/adler32"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sitebox/internal/origin"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	"sitebox/test/peers"
)

// TestRealCurlFollowsRedirect has curl -L follow a director's 307 from one
// sitebox https server (a routing store) to a second one (an origin): GET,
// ranges, HEAD with Want-Digest, PROPFIND and PUT all land on the second
// server with the director's opaque CGI. Skipped without curl unless
// CI=true.
func TestRealCurlFollowsRedirect(t *testing.T) {
	curl := peers.Require(t, "curl")
	dir, state := t.TempDir(), t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	tc, err := tlsutil.LoadOrCreate("", "", state, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var queries []string // what the origin server was asked, "METHOD ?query"
	originH := New(Config{}, o, nil)
	b := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.Method+" ?"+r.URL.RawQuery)
		mu.Unlock()
		originH.ServeHTTP(w, r)
	}))
	b.TLS = tc
	b.StartTLS()
	t.Cleanup(b.Close)

	dirStore := &routingStore{route: store.Route{Opaque: "sbx.hops=1", Reason: "test",
		To: []store.Endpoint{{Root: "127.0.0.1:1"}, {HTTPS: b.URL}}}}
	a := httptest.NewUnstartedServer(New(Config{}, dirStore, nil))
	a.TLS = tc
	a.StartTLS()
	t.Cleanup(a.Close)

	run := func(args ...string) string {
		t.Helper()
		args = append([]string{"-sS", "-L", "--max-redirs", "16", "--max-time", "30", "--cacert", filepath.Join(state, "cert.pem")}, args...)
		var out, errb bytes.Buffer
		cmd := exec.Command(curl, args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("curl %s: %v: %s", strings.Join(args, " "), err, errb.String())
		}
		return out.String()
	}
	data := []byte(strings.Repeat("redirected data ", 7000))
	local := filepath.Join(t.TempDir(), "up")
	if err := os.WriteFile(local, data, 0o644); err != nil {
		t.Fatal(err)
	}
	u := a.URL + "/store/dir/file?vo=cms"

	if got := run("-o", "/dev/null", "-w", "%{http_code} %{num_redirects}", "-T", local, u); got != "201 1" {
		t.Fatalf("PUT through the redirect: %s", got)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "dir", "file")); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the upload did not land on the origin's pool: %v", err)
	}
	if got := run(u); got != string(data) {
		t.Fatalf("GET: %d bytes, want %d", len(got), len(data))
	}
	if got := run("-r", "1000-1999", u); got != string(data[1000:2000]) {
		t.Fatalf("range: %q", got)
	}
	head := run("-I", "-H", "Want-Digest: adler32", u)
	if !strings.Contains(head, " 307") || !strings.Contains(strings.ToLower(head), "link: <"+strings.ToLower(b.URL)) {
		t.Errorf("HEAD did not show the redirect with a Link:\n%s", head)
	}
	if want := fmt.Sprintf("adler32=%08x", adler32.Checksum(data)); !strings.Contains(strings.ToLower(head), "digest: "+want) {
		t.Fatalf("HEAD with Want-Digest lacks %s:\n%s", want, head)
	}
	prop := run("-X", "PROPFIND", "-H", "Depth: 0", u)
	if !strings.Contains(prop, "<D:href>/store/dir/file</D:href>") || !strings.Contains(prop, fmt.Sprintf("<D:getcontentlength>%d</D:getcontentlength>", len(data))) {
		t.Fatalf("PROPFIND:\n%s", prop)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, m := range []string{"PUT", "GET", "HEAD", "PROPFIND"} {
		if want := m + " ?vo=cms&sbx.hops=1"; !contains(queries, want) {
			t.Errorf("origin never saw %q; it saw %q", want, queries)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
