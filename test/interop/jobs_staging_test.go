package interop

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/jobs"
	jobsapi "sitebox/internal/jobs/api"
	"sitebox/internal/origin"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
	"sitebox/test/peers"
)

// Job staging acts only as the job's owner. bob, of a foreign issuer
// with compute scopes and no storage scope, attacks a box whose staging
// has a token of its own, as an outside review did: he stages alice's
// private file by URL and by path, overwrites her delivered output, sends
// his outputs to servers of his choosing that ask for a token, and to an
// internal address. Each must fail with why, naming him, and the box's
// token must reach none of his servers; the access log and the box log
// name him for every transfer. alice, with storage scopes for her own
// areas, stages in and out.
func TestJobStagingActsAsOwner(t *testing.T) {
	peers.Require(t, "curl")
	foreign := newForeignIssuer(t, "https://foreign.example")
	pool := t.TempDir()
	os.Chmod(pool, 0o750) // the box refuses pools its jobs could read
	writeFile(t, filepath.Join(pool, "user/alice/private.txt"), "alice-private-data\n")
	writeFile(t, filepath.Join(pool, "jobsout/alice/result.txt"), "alice-result\n")

	evil := &credLog{}
	plain := httptest.NewServer(evil.wrap(askForToken))
	defer plain.Close()
	fishing := httptest.NewTLSServer(evil.wrap(askForToken))
	defer fishing.Close()
	roots, rootsCA := tokenTakingRoots(t, evil)
	inside := &credLog{}
	internal, internalCA := httpsOn(t, "127.0.0.2:0", inside.wrap(askForToken))
	spec := prepareNode(t, 0)
	// The box's own certificate, made before it starts, is trusted for
	// staging too: a certificate error must not be what stops bob.
	if _, err := tlsutil.LoadOrCreate("", "", filepath.Join(spec.state, "tls"), []string{"127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "stage-ca.pem")
	writeFile(t, ca, pemOf(fishing.Certificate().Raw)+readFile(t, rootsCA)+readFile(t, internalCA)+readFile(t, filepath.Join(spec.state, "tls", tlsutil.CertName)))

	stageToken := foreign.token(t, "the-box", "", "storage.read:/store storage.modify:/store")
	tokFile := filepath.Join(t.TempDir(), "stage.token")
	writeFile(t, tokFile, stageToken+"\n")
	access := filepath.Join(t.TempDir(), "access.log")
	spec.server = "access_log = " + quote(access) + "\n"
	self := "127.0.0.1:" + strconv.Itoa(spec.rp)
	conf := jobsConf(t, []string{"sbxslot8"}, "cpus = 1\ncache = \"roots://"+self+"\"\nstage_token_file = "+quote(tokFile)+"\nstage_ca = "+quote(ca)+"\n") +
		"[[export]]\nprefix = \"/store\"\npools = [" + quote(pool) + "]\n" +
		"[[auth.namespace]]\nprefix = \"/store\"\nread = \"token\"\nwrite = \"token\"\n" +
		"[tpc]\nallow = [\"*\", \"127.0.0.1\"]\n" + foreign.conf()
	box := spec.startIssuer(t, "jobs", "T3", nil, conf)
	bob := &jobUser{t: t, n: box, token: foreign.token(t, "bob", "/cms", "compute.create compute.read"), dir: t.TempDir()}

	cat := func(from string) jobs.Job {
		return bob.runJSON(jobSpec{Executable: "/bin/sh", Arguments: []string{"-c", "cat private.txt"}, Inputs: []input{{From: from, As: "private.txt"}}})
	}
	deliver := func(dest string) (jobs.Job, string) {
		return bob.tryJSON(jobSpec{Executable: "/bin/sh", Arguments: []string{"-c", "echo bob-forgery > result.txt"},
			Outputs: []string{"result.txt"}, OutputDestination: dest})
	}
	refused := func(what string, j jobs.Job, words ...string) {
		t.Helper()
		if j.State != jobs.Failed {
			t.Errorf("%s: job %s is %s (%s); want failed", what, j.ID, j.State, j.Reason)
			return
		}
		for _, w := range words {
			if !strings.Contains(j.Reason, w) {
				t.Errorf("%s: the reason does not say %q: %s", what, w, j.Reason)
			}
		}
		if out, _ := bob.cli("logs", j.ID); strings.Contains(out, "alice-private-data") {
			t.Errorf("%s: bob's job read alice's file", what)
		}
	}

	// The confused deputy: alice's private file, by URL of the box and by
	// path; her delivered output.
	refused("input by URL of the box", cat("roots://"+self+"//store/user/alice/private.txt"), "bob", "staging")
	refused("input by path", cat("/store/user/alice/private.txt"), "bob", "staging")
	j, _ := deliver("roots://" + self + "//store/jobsout/alice/")
	refused("output over alice's", j, "bob", "outputs")
	if got := readFile(t, filepath.Join(pool, "jobsout/alice/result.txt")); got != "alice-result\n" {
		t.Errorf("alice's delivered output was overwritten: %q", got)
	}

	// The box's token and the servers bob chooses.
	if _, reply := deliver(plain.URL + "/drop/"); !strings.Contains(reply, `scheme \"http\" is not supported`) {
		t.Errorf("an http:// destination: %s; want it refused at submission", reply)
	}
	j, _ = deliver(fishing.URL + "/drop/")
	refused("output to a server asking for a token", j)
	j, _ = deliver("roots://" + roots + "//drop/")
	t.Logf("output to a roots:// server taking tokens: %s (%s)", j.State, j.Reason)
	reqs, creds := evil.snapshot()
	if len(reqs) == 0 {
		t.Errorf("bob's servers were never reached: the test proves nothing")
	}
	for _, c := range creds {
		if strings.Contains(c, stageToken) {
			t.Errorf("a server bob chose got the box's stage token: %.60q", c)
		}
	}

	// An internal address [tpc] allow does not list.
	j, _ = deliver(internal + "/drop/")
	refused("output to an internal address", j, "[tpc] allow")
	if reqs, _ := inside.snapshot(); len(reqs) > 0 {
		t.Errorf("the internal server was reached: %q", reqs)
	}

	// alice stages her own.
	aliceU := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", "compute.create,compute.read,storage.read:/store/user/alice,storage.create:/store/jobsout/alice"), dir: t.TempDir()}
	aj := aliceU.runJSON(jobSpec{Executable: "/bin/sh", Arguments: []string{"-c", "cat private.txt > copy.txt"},
		Inputs: []input{{From: "/store/user/alice/private.txt", As: "private.txt"}}, Outputs: []string{"copy.txt"},
		OutputDestination: "roots://" + self + "//store/jobsout/alice/new/"})
	if aj.State != jobs.Completed {
		t.Errorf("alice's own staging: %s (%s)", aj.State, aj.Reason)
	} else if got := readFile(t, filepath.Join(pool, "jobsout/alice/new/copy.txt")); got != "alice-private-data\n" {
		t.Errorf("alice's delivered output: %q", got)
	}

	// Both logs name the owner of every staging transfer.
	lines := readFile(t, access)
	for _, want := range []string{
		"proto=job op=stage-in client=job:", "issuer=https://foreign.example subject=bob path=/store/user/alice/private.txt",
		"op=stage-out", "path=/store/jobsout/alice/result.txt", "subject=alice path=/store/user/alice/private.txt bytes=19",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("the access log lacks %q:\n%s", want, lines)
		}
	}
	if n := strings.Count(lines, "subject=bob"); n < 6 {
		t.Errorf("%d access-log lines name bob for his 6 staging transfers:\n%s", n, lines)
	}
	if log := box.proc.Log.String(); !strings.Contains(log, "owner=bob issuer=https://foreign.example") {
		t.Errorf("the box log does not name bob as the owner of his staging")
	}
}

// Staging is no way into the site's internal network: an input from an
// address [tpc] allow does not list (by default, no loopback or private
// one) is refused before the box connects.
func TestJobStagingDialCheck(t *testing.T) {
	inside := &credLog{}
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/", Pools: []string{t.TempDir()}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	w, _ := store.Create(context.Background(), o, "/internal-only", store.CreateOptions{})
	w.WriteAt([]byte("internal-secret\n"), 0)
	w.Close()
	internal, internalCA := httpsOn(t, "127.0.0.2:0", inside.wrap(webdav.New(webdav.Config{}, o, nil)))
	box := startIssuerNode(t, "jobs", "T3", jobsConf(t, []string{"sbxslot9"}, "cpus = 1\nstage_ca = "+quote(internalCA)+"\n"))
	u := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	j := u.runJSON(jobSpec{Executable: "/bin/cat", Arguments: []string{"internal-only"}, Inputs: []input{{From: internal + "/internal-only"}}})
	if j.State != jobs.Failed || !strings.Contains(j.Reason, "[tpc] allow") {
		t.Errorf("an input from an internal address: %s (%s); want failed naming [tpc] allow", j.State, j.Reason)
	}
	if out, _ := u.cli("logs", j.ID); strings.Contains(out, "internal-secret") {
		t.Errorf("the job read the internal server's file")
	}
	if reqs, _ := inside.snapshot(); len(reqs) > 0 {
		t.Errorf("the internal server was reached: %q", reqs)
	}
}

// jobSpec is the part of a job's spec these tests send to the API, as
// any client may (the CLI checks less than an attacker would try).
type jobSpec struct {
	Executable        string   `json:"executable"`
	Arguments         []string `json:"arguments,omitempty"`
	Inputs            []input  `json:"inputs,omitempty"`
	Outputs           []string `json:"outputs,omitempty"`
	OutputDestination string   `json:"output_destination,omitempty"`
}

type input struct {
	From string `json:"from"`
	As   string `json:"as,omitempty"`
}

// tryJSON posts one job straight to the API; it returns the job once it
// has ended, or the reply when the box refused it.
func (u *jobUser) tryJSON(sp jobSpec) (jobs.Job, string) {
	u.t.Helper()
	type local struct {
		jobSpec
		Domains []string `json:"domains"`
	}
	body, _ := json.Marshal(map[string]any{"specs": []local{{sp, []string{"local"}}}})
	reply, _ := runEnv(u.t, nil, "curl", "-s", "--cacert", u.n.certFile, "-H", "Authorization: Bearer "+u.token,
		"-H", "Content-Type: application/json", "--data", string(body), u.n.httpsURL+jobsapi.Prefix)
	var r struct{ Jobs []jobs.Job }
	if json.Unmarshal([]byte(reply), &r) != nil || len(r.Jobs) != 1 {
		return jobs.Job{}, reply
	}
	return u.final(r.Jobs[0].ID, 60*time.Second), reply
}

// runJSON is tryJSON for a job the box must accept.
func (u *jobUser) runJSON(sp jobSpec) jobs.Job {
	u.t.Helper()
	j, reply := u.tryJSON(sp)
	if j.ID == "" {
		u.t.Fatalf("job refused: %s", reply)
	}
	return j
}

// final waits for job id to end.
func (u *jobUser) final(id string, within time.Duration) jobs.Job {
	u.t.Helper()
	deadline := time.Now().Add(within)
	for {
		j := u.status(id)
		if j.State.Final() {
			return j
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("job %s did not end: %s (%s)", id, j.State, j.Reason)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// credLog records each request a server of the test was sent and every
// credential it carried.
type credLog struct {
	mu          sync.Mutex
	reqs, creds []string
}

func (c *credLog) add(req, cred string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, req)
	if cred != "" {
		c.creds = append(c.creds, cred)
	}
}

func (c *credLog) snapshot() (reqs, creds []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.reqs...), append([]string(nil), c.creds...)
}

func (c *credLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.add(r.Method+" "+r.URL.Path, r.Header.Get("Authorization")+" "+r.URL.Query().Get("authz"))
		h.ServeHTTP(w, r)
	})
}

// Verify records a token a roots:// server was given, and takes it.
func (c *credLog) Verify(_ context.Context, raw string) (*store.Identity, error) {
	c.add("ztn", raw)
	return &store.Identity{Subject: "whoever", Scopes: []store.Scope{{Op: store.ScopeModify, Path: "/"}, {Op: store.ScopeRead, Path: "/"}}}, nil
}

// askForToken answers 401, asking for a bearer token.
var askForToken = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="hand it over"`)
	http.Error(w, "token needed", http.StatusUnauthorized)
})

// tokenTakingRoots is a roots:// server that asks for and records tokens;
// it returns host:port and its CA file.
func tokenTakingRoots(t *testing.T, c *credLog) (string, string) {
	t.Helper()
	tc, caFile := testTLS(t)
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/", Pools: []string{t.TempDir()}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := xrdserver.New(xrdserver.Config{TLS: tc, Auth: auth.NewAuthenticator(auth.Verifiers{Tokens: c}, nil)}, o, nil)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		o.Close()
	})
	return ln.Addr().String(), caFile
}

// httpsOn serves h over TLS on addr; it returns the base URL and CA file.
func httpsOn(t *testing.T, addr string, h http.Handler) (string, string) {
	t.Helper()
	tc, caFile := testTLS(t)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}, TLS: tc}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL, caFile
}

// testTLS is a self-signed certificate for the loopback addresses.
func testTLS(t *testing.T) (*tls.Config, string) {
	t.Helper()
	state := t.TempDir()
	tc, err := tlsutil.LoadOrCreate("", "", state, []string{"127.0.0.1", "127.0.0.2", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	return tc, filepath.Join(state, tlsutil.CertName)
}

func pemOf(der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
