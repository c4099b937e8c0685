package staging

import (
	"bytes"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/accesslog"
	"sitebox/internal/auth"
	"sitebox/internal/jobs"
	"sitebox/internal/jobs/spec"
	"sitebox/internal/origin"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	"sitebox/internal/tpc/tpcallow"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// The stage token of the tests' box: it must never reach a server the
// user chose.
const stageSecret = "STAGE-TOKEN-OF-THE-BOX"

// The tests' users: alice of the site, with storage scopes for her own
// areas; bob of a foreign issuer, with compute scopes only.
const (
	siteIssuer    = "https://site.example"
	foreignIssuer = "https://elsewhere.example"
)

func compute() []store.Scope { return []store.Scope{{Op: store.ScopeComputeCreate}} }

var (
	alice = jobs.StageOwner{Job: "7.0", Identity: &store.Identity{Subject: "alice", Issuer: siteIssuer, Groups: []string{"/cms"},
		Scopes: append(compute(), store.Scope{Op: store.ScopeRead, Path: "/store/user/alice"},
			store.Scope{Op: store.ScopeCreate, Path: "/store/jobsout/alice"})}}
	bob = jobs.StageOwner{Job: "8.0", Identity: &store.Identity{Subject: "bob", Issuer: foreignIssuer, Groups: []string{"/cms"},
		Scopes: compute()}}
)

// sitePolicy protects /store: reads and writes need a covering scope.
func sitePolicy(t *testing.T) *auth.Policy {
	t.Helper()
	p, err := auth.NewPolicy([]auth.Namespace{{Prefix: "/store", Read: auth.ReadToken, Write: auth.WriteToken}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// siteOrigin is an origin exporting /store from a fresh pool holding
// alice's private file and her delivered output.
func siteOrigin(t *testing.T) (*origin.Origin, string) {
	t.Helper()
	pool := t.TempDir()
	for name, data := range map[string]string{"user/alice/private.txt": "alice's secret\n", "jobsout/alice/result.txt": "alice's result\n"} {
		p := filepath.Join(pool, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{pool}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o, pool
}

// accessLines collects access-log entries.
type accessLines struct {
	mu sync.Mutex
	es []accesslog.Entry
}

func (a *accessLines) Transfer(e accesslog.Entry) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.es = append(a.es, e)
}

func (a *accessLines) all() []accesslog.Entry {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]accesslog.Entry(nil), a.es...)
}

// logBuffer is a slog text logger into a buffer safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// allow parses a [tpc] allow list.
func allow(t *testing.T, entries ...string) *tpcallow.Policy {
	t.Helper()
	p, err := tpcallow.Parse(entries)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// seen is what a recording server was sent: every request, and every
// credential (Authorization headers, authz CGI, ztn tokens).
type seen struct {
	mu    sync.Mutex
	reqs  []string
	creds []string
}

func (s *seen) add(req, cred string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if cred != "" {
		s.creds = append(s.creds, cred)
	}
}

func (s *seen) snapshot() (reqs, creds []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...), append([]string(nil), s.creds...)
}

// recording wraps h, noting each request and any credential it carries.
func recording(s *seen, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cred := r.Header.Get("Authorization")
		if q := r.URL.Query().Get("authz"); q != "" {
			cred += " authz=" + q
		}
		s.add(r.Method+" "+r.URL.Path, cred)
		h.ServeHTTP(w, r)
	})
}

// demanding answers every request 401 asking for a bearer token, as a
// server fishing for one would.
var demanding = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="give me your token"`)
	http.Error(w, "token needed", http.StatusUnauthorized)
})

// httpServer serves h on addr ("127.0.0.1:0" or another loopback
// address), over TLS when tlsOn; it returns the base URL and the CA file
// a client needs.
func httpServer(t *testing.T, addr string, tlsOn bool, h http.Handler) (base, caFile string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	if !tlsOn {
		srv.Start()
		t.Cleanup(srv.Close)
		return srv.URL, ""
	}
	tc, caFile := serverTLS(t)
	srv.TLS = tc
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL, caFile
}

// serverTLS is a fresh self-signed certificate for 127.0.0.1 and the CA
// file that trusts it.
func serverTLS(t *testing.T) (*tls.Config, string) {
	t.Helper()
	state := t.TempDir()
	tc, err := tlsutil.LoadOrCreate("", "", state, []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	return tc, filepath.Join(state, tlsutil.CertName)
}

// acceptAny records every token a roots:// server is given and accepts
// it with full rights.
type acceptAny struct{ s *seen }

func (a acceptAny) Verify(_ context.Context, raw string) (*store.Identity, error) {
	a.s.add("ztn", raw)
	return &store.Identity{Subject: "whoever", Scopes: []store.Scope{{Op: store.ScopeRead, Path: "/"}, {Op: store.ScopeModify, Path: "/"}}}, nil
}

// rootsServer serves st over roots:// with a token-taking login that
// records every token; it returns host:port and the CA file.
func rootsServer(t *testing.T, st store.Store, s *seen) (string, string) {
	t.Helper()
	tc, caFile := serverTLS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := xrdserver.New(xrdserver.Config{TLS: tc, Auth: auth.NewAuthenticator(auth.Verifiers{Tokens: acceptAny{s}}, nil)}, st, nil)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return ln.Addr().String(), caFile
}

// davOver serves st over WebDAV, verifying bearer tokens with v.
func davOver(st store.Store, v store.TokenVerifier) http.Handler {
	return webdav.New(webdav.Config{Auth: auth.NewAuthenticator(auth.Verifiers{Tokens: v}, nil)}, st, nil)
}

// mustNotExist fails when p exists.
func mustNotExist(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Stat(p); err == nil {
		t.Errorf("%s exists", p)
	}
}

// input is an input read from from.
func input(from string) spec.Input { return spec.Input{From: from} }

// noCred fails when any credential in creds is the box's token.
func noBoxToken(t *testing.T, who string, creds []string) {
	t.Helper()
	for _, c := range creds {
		if strings.Contains(c, stageSecret) {
			t.Errorf("%s was sent the box's stage token: %q", who, c)
		}
	}
}
