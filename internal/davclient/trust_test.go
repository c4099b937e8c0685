package davclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"sitebox/internal/outbound"
	"sitebox/internal/store"
)

// A malicious upstream answers 307 to another host:port: a client with
// RedirectTo (a cache) refuses to follow, names the host, and the other
// host receives nothing, least of all the token.
func TestRedirectToUntrustedHostRefused(t *testing.T) {
	var rb recorder
	b := tlsServer(t, rb.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("internal secrets"))
	})))
	a := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b.URL+r.URL.Path+"?authz=x", http.StatusTemporaryRedirect)
	}))
	bHost, _ := url.Parse(b.URL)
	var asked []string
	fs, err := New(a.URL, Options{Insecure: true, Options: outbound.Options{Token: "cache-token", RedirectTo: func(hp string) error {
		asked = append(asked, hp)
		return fmt.Errorf("redirect to %s refused: not in [cache] trusted_redirects", hp)
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	ctx := context.Background()
	for name, op := range map[string]func() error{
		"stat":     func() error { _, err := fs.Stat(ctx, "/store/f"); return err },
		"open":     func() error { _, err := fs.Open(ctx, "/store/f"); return err },
		"checksum": func() error { _, err := fs.Checksum(ctx, "/store/f", "adler32"); return err },
	} {
		err := op()
		if err == nil || !strings.Contains(err.Error(), bHost.Host) || !strings.Contains(err.Error(), "trusted_redirects") {
			t.Errorf("%s redirected to an untrusted host: %v", name, err)
		}
		if !errors.Is(err, store.ErrPermission) {
			t.Errorf("%s: a refused redirect should be ErrPermission: %v", name, err)
		}
	}
	if len(rb.reqs) != 0 {
		t.Fatalf("the untrusted host was contacted: %q", rb.reqs)
	}
	if len(asked) == 0 || asked[0] != bHost.Host {
		t.Errorf("RedirectTo asked about %q, want %s", asked, bHost.Host)
	}
}

// A user's own client (no RedirectTo) follows the redirect but keeps its
// token from a host that serves without one.
func TestTokenOnlyWhereAsked(t *testing.T) {
	var rb recorder
	b := tlsServer(t, rb.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nothing", http.StatusNotFound)
	})))
	a := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	fs := client(t, a.URL, "tok123")
	if _, err := fs.Stat(context.Background(), "/store/x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("stat: %v", err)
	}
	if !rb.saw("PROPFIND /store/x range= auth=") || rb.saw("PROPFIND /store/x range= auth=Bearer") {
		t.Fatalf("token sent to a host that did not ask for it: %q", rb.reqs)
	}
}
