package api

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/jobs"
	"sitebox/internal/jobs/jobstest"
	"sitebox/internal/jobs/local/localtest"
	"sitebox/internal/store"
)

// The job API asks for the compute scope each call needs, and a job is
// its owner's by issuer and subject: the same subject from another
// issuer is someone else. Refusals say why, in the reply and the log.
func TestAPIScopesAndOwners(t *testing.T) {
	e := jobstest.Start(t, []string{"sbxslot13"}, nil)
	compute := []store.Scope{{Op: store.ScopeComputeCreate}, {Op: store.ScopeComputeRead}, {Op: store.ScopeComputeCancel}}
	ids := map[string]*store.Identity{
		"site-alice":    {Issuer: jobstest.Issuer, Subject: "alice", Scopes: compute},
		"foreign-alice": {Issuer: "https://foreign.example", Subject: "alice", Scopes: compute},
		"storage-only":  {Issuer: jobstest.Issuer, Subject: "alice", Scopes: []store.Scope{{Op: store.ScopeRead, Path: "/"}, {Op: store.ScopeCreate, Path: "/"}}},
		"read-only":     {Issuer: jobstest.Issuer, Subject: "alice", Scopes: []store.Scope{{Op: store.ScopeComputeRead}}},
	}
	var logs bytes.Buffer
	api := &API{Svc: e.S, Log: slog.New(slog.NewTextHandler(&logs, nil)), Local: func(*store.Identity) bool { return true },
		Auth: auth.NewAuthenticator(auth.Verifiers{Tokens: auth.TokenFunc(func(_ context.Context, raw string) (*store.Identity, error) {
			if id := ids[raw]; id != nil {
				return id, nil
			}
			return nil, errors.New("unknown token")
		})}, nil)}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	call := func(tok, method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	job := `{"specs":[{"executable":"/bin/sleep","arguments":["30"],"domains":["local"]}]}`
	if code, body := call("storage-only", "POST", Prefix, job); code != http.StatusForbidden || !strings.Contains(body, "lacks the compute.create scope") {
		t.Errorf("storage-only submit: %d %s", code, body)
	}
	if code, body := call("read-only", "POST", Prefix, job); code != http.StatusForbidden || !strings.Contains(body, "compute.create") {
		t.Errorf("compute.read-only submit: %d %s", code, body)
	}
	if !strings.Contains(logs.String(), "lacks the compute.create scope") {
		t.Errorf("refusal not logged:\n%s", logs.String())
	}
	code, body := call("site-alice", "POST", Prefix, job)
	if code != http.StatusCreated {
		t.Fatalf("site alice's submit: %d %s", code, body)
	}
	js := e.S.List(nil)
	if len(js) != 1 || js[0].Issuer != jobstest.Issuer || js[0].Owner != "alice" {
		t.Fatalf("recorded %+v", js)
	}
	// Its staging acts with exactly the token's rights, kept with it.
	if r := js[0].Rights; r == nil || len(r.Scopes) != len(compute) || r.Scopes[0] != compute[0] {
		t.Errorf("the job keeps the rights %+v; want its token's %v", r, compute)
	}
	if as := js[0].StageOwner(); as.Identity.Subject != "alice" || as.Identity.Issuer != jobstest.Issuer || len(as.Identity.Scopes) != len(compute) {
		t.Errorf("staging would act as %+v", as.Identity)
	}
	id := js[0].ID
	e.WaitState(id, jobs.Running, 20*time.Second)
	for _, c := range []struct{ method, path string }{{"GET", Prefix + "/" + id}, {"GET", Prefix + "/" + id + "/logs"}, {"GET", Prefix + "/" + id + "/outputs"}, {"DELETE", Prefix + "/" + id}} {
		if code, body := call("foreign-alice", c.method, c.path, ""); code != http.StatusNotFound {
			t.Errorf("foreign alice %s %s: %d %s", c.method, c.path, code, body)
		}
	}
	if _, body := call("foreign-alice", "GET", Prefix, ""); strings.Contains(body, `"id":"`+id+`"`) {
		t.Errorf("foreign alice lists the site's alice's job: %s", body)
	}
	if code, body := call("read-only", "DELETE", Prefix+"/"+id, ""); code != http.StatusForbidden || !strings.Contains(body, "compute.cancel") {
		t.Errorf("cancel without compute.cancel: %d %s", code, body)
	}
	if code, body := call("site-alice", "DELETE", Prefix+"/"+id, ""); code != http.StatusOK {
		t.Errorf("site alice's cancel: %d %s", code, body)
	}
	e.WaitState(id, jobs.Cancelled, 10*time.Second)
	// Outputs: only what the job declared (and its stdout, stderr) is
	// served; anything else is refused by name, in the reply and the log.
	if code, body := call("site-alice", "GET", Prefix+"/"+id+"/outputs", ""); code != http.StatusOK || !strings.Contains(body, `"save_as":"stdout"`) {
		t.Errorf("outputs of an ended job: %d %s", code, body)
	}
	for _, f := range []string{"../jobs.db", "/etc/passwd", "job.sbatch"} {
		if code, body := call("site-alice", "GET", Prefix+"/"+id+"/outputs?file="+f, ""); code != http.StatusNotFound || !strings.Contains(body, "not an output") {
			t.Errorf("outputs?file=%s: %d %s", f, code, body)
		}
	}
	if !strings.Contains(logs.String(), "not an output") {
		t.Errorf("refused output not logged")
	}
}

func TestMain(m *testing.M) { localtest.Main(m) }

// A request without an Authorization header is authenticated by its
// client certificate: a mapped X.509 user with compute scopes submits
// and owns its jobs by (x509 issuer, DN); one without them, or with a
// refused certificate, is refused 403 with the reason; a bearer token
// wins over the certificate.
func TestAPIClientCertificate(t *testing.T) {
	e := jobstest.Start(t, []string{"sbxslot13"}, nil)
	const dn, iss = "/DC=org/DC=example/CN=Alice", "x509:/DC=org/DC=example/CN=CA"
	compute := []store.Scope{{Op: store.ScopeComputeCreate}, {Op: store.ScopeComputeRead}, {Op: store.ScopeComputeCancel}}
	certs := map[string]*store.Identity{
		"mapped":   {Method: auth.MethodX509, Issuer: iss, Subject: dn, Scopes: compute, Groups: []string{"/testvo"}, FQANs: []string{"/testvo/Role=NULL/Capability=NULL"}},
		"unmapped": {Method: auth.MethodX509, Issuer: iss, Subject: dn, Groups: []string{"/testvo"}},
	}
	api := &API{Svc: e.S, Local: func(*store.Identity) bool { return false },
		Auth: auth.NewAuthenticator(auth.Verifiers{Tokens: auth.TokenFunc(func(_ context.Context, raw string) (*store.Identity, error) {
			return &store.Identity{Issuer: jobstest.Issuer, Subject: "tokenuser"}, nil
		})}, nil),
		// The test's stand-in for the TLS client certificate, which the
		// box's authenticator verified: an X.509 identity.
		Certificate: func(r *http.Request) (*store.Identity, error) {
			switch c := r.Header.Get("X-Test-Cert"); c {
			case "":
				return nil, nil
			case "expired":
				return nil, errors.New("client certificate refused: certificate 0: expired")
			default:
				return certs[c], nil
			}
		}}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	call := func(cert, auth, method, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+Prefix, strings.NewReader(body))
		if cert != "" {
			req.Header.Set("X-Test-Cert", cert)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	job := `{"specs":[{"executable":"/bin/true","domains":["local"]}]}`
	for _, c := range []struct {
		name, cert, auth string
		want             int
		says             string
	}{
		{"no credential", "", "", 401, "or an X.509 proxy as the client certificate"},
		{"refused certificate", "expired", "", 403, "client certificate refused: certificate 0: expired"},
		{"no compute scope", "unmapped", "", 403, "the certificate's mapping ([auth.x509]) lacks the compute.create scope"},
		{"a token wins", "unmapped", "Bearer tok", 403, "token lacks the compute.create scope"},
		{"mapped", "mapped", "", 201, `"grid":true`},
	} {
		if code, body := call(c.cert, c.auth, "POST", job); code != c.want || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, code, body, c.want, c.says)
		}
	}
	js := e.S.List(nil)
	if len(js) != 1 || js[0].Issuer != iss || js[0].Owner != dn || js[0].VO != "testvo" {
		t.Fatalf("recorded %+v", js)
	}
	// The job keeps how its owner proved who they are, and the FQANs.
	if js[0].Auth != auth.MethodX509 || len(js[0].FQANs) != 1 || js[0].FQANs[0] != "/testvo/Role=NULL/Capability=NULL" {
		t.Errorf("recorded credential %q %q, want x509 with the FQAN", js[0].Auth, js[0].FQANs)
	}
	if so := js[0].StageOwner().Identity; !so.Is(auth.MethodX509) || so.Subject != dn {
		t.Errorf("staging acts as %+v, want the X.509 owner", so)
	}
	if code, body := call("mapped", "", "GET", ""); code != 200 || !strings.Contains(body, js[0].ID) {
		t.Errorf("the owner lists: %d %s", code, body)
	}
}
