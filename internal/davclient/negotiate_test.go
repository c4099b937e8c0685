package davclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"sitebox/internal/outbound"
)

// askNegotiate answers every request with a Kerberos challenge.
var askNegotiate = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("WWW-Authenticate", "Bearer realm=\"x\"")
	w.Header().Add("WWW-Authenticate", "Negotiate")
	http.Error(w, "who are you", http.StatusUnauthorized)
})

// krbClient is a client whose Kerberos credential counts the times it
// was asked for, and fails (the tickets themselves need a KDC, see the
// interop tests).
func krbClient(t *testing.T, base string) (*FS, *atomic.Int32) {
	t.Helper()
	var asked atomic.Int32
	krb := func() (*outbound.Kerberos, error) {
		asked.Add(1)
		return nil, errors.New("no tickets here")
	}
	fs, err := New(base, Options{Insecure: true, Options: outbound.Options{Kerberos: krb}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fs.client.CloseIdleConnections)
	return fs, &asked
}

// The server the user named gets Kerberos when it asks; why none could
// be sent is the error.
func TestNegotiateAsked(t *testing.T) {
	for _, s := range []*httptest.Server{tlsServer(t, askNegotiate), httptest.NewServer(askNegotiate)} {
		defer s.Close()
		fs, asked := krbClient(t, s.URL)
		_, err := fs.Stat(context.Background(), "/store/f")
		if err == nil || !strings.Contains(err.Error(), "asks for Kerberos (Negotiate): no tickets here") || asked.Load() != 1 {
			t.Errorf("%s: %v (credential asked %d times)", s.URL, err, asked.Load())
		}
	}
}

// Another host reached by a redirect in clear text is never sent the
// user's Kerberos credential, even when it asks.
func TestNegotiateNotInClearElsewhere(t *testing.T) {
	other := httptest.NewServer(askNegotiate)
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	fs, asked := krbClient(t, first.URL)
	_, err := fs.Stat(context.Background(), "/store/f")
	if err == nil || !strings.Contains(err.Error(), "401") || asked.Load() != 0 {
		t.Errorf("redirected to plain http elsewhere: %v (credential asked %d times, want 0)", err, asked.Load())
	}
}

func TestOffersNegotiate(t *testing.T) {
	for v, want := range map[string]bool{
		"Negotiate":                     true,
		"Bearer realm=\"x\", negotiate": true,
		"Negotiate YIIB":                true,
		"NegotiateX":                    false,
		"Bearer":                        false,
	} {
		if got := offersNegotiate([]string{v}); got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
		}
	}
}

// A host that wanted Kerberos once still serves its public files when no
// ticket can be made: the credential is an error only when the request
// itself is challenged.
func TestNegotiatePublicAfterChallenge(t *testing.T) {
	h, dir := newOrigin(t)
	if err := os.WriteFile(filepath.Join(dir, "pub"), []byte("public"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/secret") {
			askNegotiate(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	fs, _ := krbClient(t, s.URL)
	if _, err := fs.Stat(context.Background(), "/store/secret"); err == nil || !strings.Contains(err.Error(), "asks for Kerberos") {
		t.Fatalf("the protected file: %v", err)
	}
	if fi, err := fs.Stat(context.Background(), "/store/pub"); err != nil || fi.Size != 6 {
		t.Errorf("the public file after the challenge: %v, %v", fi, err)
	}
}
