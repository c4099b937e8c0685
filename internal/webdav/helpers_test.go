package webdav

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/origin"
)

// newServer serves an origin export /store over a fresh temp dir.
func newServer(t *testing.T, cfg Config) (*httptest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(cfg, o, nil))
	t.Cleanup(func() { srv.Close(); o.Close() })
	return srv, dir
}

// do sends one request; hdr is key, value pairs. A raw path (with escapes
// the client must not normalise) can be given as the url's path part.
func do(t *testing.T, method, url string, body io.Reader, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func writeFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
