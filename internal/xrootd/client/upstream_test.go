package client

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/xrdtest"
)

// The request a proxy makes upstream (store.WithUpstream) is sent as the
// path's CGI, next to the caller's; a client's own request in the
// context (store.WithRequest) is not.
func TestUpstreamRequestIsSent(t *testing.T) {
	o, dir := newOrigin(t)
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs := &xrdtest.RouteStore{Store: o}
	fs := NewFS(serve(t, rs))
	defer fs.Close()
	client := store.NewRequest("192.0.2.1", "authz=secret&vo=atlas")
	ctx := store.WithRequest(testCtx(t), client)
	up := &store.Request{Opaque: url.Values{store.ViaKey: {store.ViaCache}, "vo": {"cms"}}}
	if _, err := fs.Stat(store.WithUpstream(ctx, up), "/f?x=1"); err != nil {
		t.Fatal(err)
	}
	c := rs.Last("stat")
	if c == nil {
		t.Fatal("stat not seen")
	}
	q := c.Req.Opaque
	if q.Get(store.ViaKey) != store.ViaCache || q.Get("vo") != "cms" || q.Get("x") != "1" || q.Has("authz") {
		t.Errorf("server saw CGI %q", q.Encode())
	}
}
