package client

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"sitebox/internal/origin"
	"sitebox/internal/outbound"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/xrdtest"
)

// A server that redirects to a host RedirectTo refuses: the client says
// which host and why, and never connects there (so the host never sees
// the token at a ztn login, nor the request's CGI).
func TestRedirectToUntrustedHostRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	evil := ln.Addr().String()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/", Pools: []string{t.TempDir()}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	up := &xrdtest.RouteStore{Store: o, Decide: xrdtest.RedirectAll([]store.Endpoint{{Root: evil}}, "authz=stolen")}
	upAddr := serve(t, up)

	refuse := func(hostport string) error {
		return fmt.Errorf("redirect to %s refused: not in [cache] trusted_redirects", hostport)
	}
	fs := NewFSOptions(upAddr, Options{Options: outbound.Options{Token: "tok", RedirectTo: refuse}})
	defer fs.Close()
	ctx := testCtx(t)
	_, err = fs.Stat(ctx, "/f")
	if err == nil || !strings.Contains(err.Error(), evil) || !strings.Contains(err.Error(), "trusted_redirects") {
		t.Fatalf("stat redirected to an untrusted host: %v", err)
	}
	if !errors.Is(err, store.ErrPermission) {
		t.Errorf("a refused redirect should be ErrPermission: %v", err)
	}
	if _, err := fs.Open(ctx, "/f"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("open redirected to an untrusted host: %v", err)
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the untrusted host got %d connections", n)
	}

	// Trusted, the same redirect is followed (to a host that hangs up).
	var asked atomic.Int32
	trusting := NewFSOptions(upAddr, Options{Options: outbound.Options{RedirectTo: func(string) error { asked.Add(1); return nil }}})
	defer trusting.Close()
	if _, err := trusting.Stat(ctx, "/f"); err == nil {
		t.Fatal("stat at a host that hangs up succeeded")
	}
	if asked.Load() == 0 || accepted.Load() == 0 {
		t.Fatalf("trusted redirect not followed: asked %d, connections %d", asked.Load(), accepted.Load())
	}
}
