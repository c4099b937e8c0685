// Package api is the job router's HTTP interface: the handler a box
// serves under Prefix and the Client the CLI and partner boxes call it with.
package api

import (
	"encoding/json"
	"errors"

	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/jobs"
	"sitebox/internal/jobs/spec"
	"sitebox/internal/store"
)

// Prefix is where the submit API lives on the box's https:// port.
const Prefix = "/api/v1/jobs"

// maxSubmission bounds a submission's body: specs and the small input
// files shipped with them.
const maxSubmission = 64 << 20

// API serves the job router over HTTPS to credential holders: the owner
// and VO of a job come from the verified credential, never from the
// request.
type API struct {
	Svc *jobs.Service
	// Auth verifies the Authorization header's credential: a bearer
	// token, or Kerberos (SPNEGO) where it takes Kerberos tickets.
	Auth *auth.Authenticator
	// Certificate, if set, authenticates a request without an
	// Authorization header by its TLS client certificate (an X.509
	// proxy), which the https listener verified through Auth once per
	// connection: nil and no error when it presented none.
	Certificate func(r *http.Request) (*store.Identity, error)
	// Local says whether an identity is a local user (else a grid one).
	Local func(*store.Identity) bool
	// Log records refusals (nil: discard).
	Log *slog.Logger
}

// Submission is the body of POST /api/v1/jobs.
type Submission struct {
	Specs []spec.Spec `json:"specs"`
	// Shared are files several specs use (an input of "queue 100"),
	// sent once: by the hex SHA-256 of their bytes, which inputs name as
	// Ref.
	Shared map[string][]byte `json:"shared,omitempty"`
	// Key is the submitter's own name for the jobs (Job.Key): a box
	// flocking here sends its job's id, and after a crash lists
	// GET Prefix?key=… to find the job instead of submitting it twice.
	Key string `json:"key,omitempty"`
}

// Handler returns the HTTP handler for Prefix and below.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+Prefix, a.submit)
	mux.HandleFunc("GET "+Prefix, a.list)
	mux.HandleFunc("GET "+Prefix+"/report", a.report)
	mux.HandleFunc("GET "+Prefix+"/domains", a.domains)
	mux.HandleFunc("GET "+Prefix+"/{id}", a.get)
	mux.HandleFunc("DELETE "+Prefix+"/{id}", a.cancel)
	mux.HandleFunc("GET "+Prefix+"/{id}/logs", a.logs)
	mux.HandleFunc("GET "+Prefix+"/{id}/outputs", a.outputs)
	return mux
}

type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// Error answers a failed call with code and the problem as JSON, the
// form Client turns into a StatusError.
func Error(w http.ResponseWriter, code int, format string, args ...any) {
	if code == http.StatusUnauthorized {
		w.Header().Add("WWW-Authenticate", `Bearer realm="sitebox jobs"`)
	}
	writeJSON(w, code, apiError{Error: fmt.Sprintf(format, args...)})
}

// refuse answers and logs a refused request.
func (a *API) refuse(w http.ResponseWriter, r *http.Request, id *store.Identity, code int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	log := a.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	attrs := []any{"method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "status", code, "why", msg}
	if id != nil {
		attrs = append(attrs, "sub", id.Subject, "issuer", id.Issuer, "auth", id.Method)
	}
	log.Warn("job API request refused", attrs...)
	if code == http.StatusUnauthorized && a.Auth.Takes(auth.MethodKrb5) {
		w.Header().Add("WWW-Authenticate", "Negotiate")
	}
	Error(w, code, "%s", msg)
}

// allowed authenticates the request and checks that its token holds the
// compute scope op (store.ScopeCompute*); cancelling also accepts
// compute.modify, as WLCG lets either.
func (a *API) allowed(w http.ResponseWriter, r *http.Request, op string) (*store.Identity, bool) {
	id, ok := a.who(w, r)
	if !ok {
		return nil, false
	}
	if id.HasCompute(op) || (op == store.ScopeComputeCancel && id.HasCompute(store.ScopeComputeModify)) {
		return id, true
	}
	a.refuse(w, r, id, http.StatusForbidden, "%s lacks the %s scope (a storage scope does not allow jobs)", credential(id), op)
	return nil, false
}

// who authenticates the request.
func (a *API) who(w http.ResponseWriter, r *http.Request) (*store.Identity, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if ok && a.Auth.Takes(auth.MethodKrb5) && strings.EqualFold(scheme, "Negotiate") {
		return a.negotiated(w, r)
	}
	if h == "" && a.Certificate != nil {
		if id, ok, done := a.certified(w, r); done {
			return id, ok
		}
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		a.refuse(w, r, nil, http.StatusUnauthorized, "the job API needs a bearer token (Authorization: Bearer …)%s", a.orCertificate())
		return nil, false
	}
	id, err := a.Auth.Authenticate(r.Context(), auth.Token(strings.TrimSpace(tok)))
	if err != nil {
		a.refuse(w, r, nil, http.StatusUnauthorized, "token refused: %v", err)
		return nil, false
	}
	if id.Subject == "" {
		a.refuse(w, r, id, http.StatusUnauthorized, "token has no subject: jobs need an owner")
		return nil, false
	}
	return id, true
}

// certified authenticates a request by its client certificate; done is
// false when it presented none.
func (a *API) certified(w http.ResponseWriter, r *http.Request) (id *store.Identity, ok, done bool) {
	id, err := a.Certificate(r)
	switch {
	case err != nil:
		a.refuse(w, r, nil, http.StatusForbidden, "%v", err)
		return nil, false, true
	case id == nil:
		return nil, false, false
	}
	return id, true, true
}

// orCertificate completes "needs a bearer token" on a box that takes
// client certificates too.
func (a *API) orCertificate() string {
	if a.Certificate == nil {
		return ""
	}
	return " or an X.509 proxy as the client certificate"
}

// negotiated authenticates a Kerberos (SPNEGO) request.
func (a *API) negotiated(w http.ResponseWriter, r *http.Request) (*store.Identity, bool) {
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	id, err := a.Auth.Authenticate(r.Context(), auth.Negotiate(strings.TrimSpace(tok)))
	if err != nil {
		a.refuse(w, r, nil, http.StatusUnauthorized, "kerberos ticket refused: %v", err)
		return nil, false
	}
	return id, true
}

// credential names what proved id in refusals: an X.509 identity's
// compute scopes come from the box's mapping rules, not a token.
func credential(id *store.Identity) string {
	if id.Is(auth.MethodX509) {
		return "the certificate's mapping ([auth.x509])"
	}
	return "token"
}

// principal is the job owner id is: the (issuer, subject) pair, which
// ownership and fair share compare; how it was proven is kept beside it
// (Submitter.Method), not in it, so jobs stay their owner's whatever
// the next credential kind.
func principal(id *store.Identity) jobs.Principal {
	return jobs.Principal{Issuer: id.Issuer, Subject: id.Subject}
}

func (a *API) submit(w http.ResponseWriter, r *http.Request) {
	id, ok := a.allowed(w, r, store.ScopeComputeCreate)
	if !ok {
		return
	}
	var sub Submission
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSubmission))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sub); err != nil {
		Error(w, http.StatusBadRequest, "submission is not valid JSON: %v", err)
		return
	}
	vo := ""
	if vos := id.VOs(); len(vos) > 0 {
		vo = vos[0]
	}
	who := jobs.Submitter{Owner: principal(id), Method: id.Method, FQANs: id.FQANs, VO: vo, Grid: !a.Local(id), Rights: jobs.RightsOf(id)}
	js, err := a.Svc.SubmitKeyed(who, sub.Key, sub.Specs, sub.Shared)
	if err != nil {
		Error(w, http.StatusBadRequest, "%v", err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"jobs": js})
}

// domains lists where jobs may run, for a client checking a job file
// before it submits: submitting (compute.create) is reason enough.
func (a *API) domains(w http.ResponseWriter, r *http.Request) {
	id, ok := a.who(w, r)
	if !ok {
		return
	}
	if !id.HasCompute(store.ScopeComputeCreate) && !id.HasCompute(store.ScopeComputeRead) {
		a.refuse(w, r, id, http.StatusForbidden, "%s lacks the compute.create scope (a storage scope does not allow jobs)", credential(id))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"domains": a.Svc.Domains(), "sites": a.Svc.SiteDomains(),
		"attributes": a.Svc.DomainAttributes()})
}

func (a *API) list(w http.ResponseWriter, r *http.Request) {
	id, ok := a.allowed(w, r, store.ScopeComputeRead)
	if !ok {
		return
	}
	who := principal(id)
	key, byKey := r.URL.Query()["key"]
	js := a.Svc.List(func(j *jobs.Job) bool { return j.Principal() == who && (!byKey || j.Key == key[0]) })
	writeJSON(w, http.StatusOK, map[string]any{"jobs": js, "domains": a.Svc.Domains()})
}

// own returns the caller's job named in the path, if the token holds
// the compute scope op. A job is the caller's when both its issuer and
// its subject are the token's.
func (a *API) own(w http.ResponseWriter, r *http.Request, op string) (*jobs.Job, *store.Identity, bool) {
	id, ok := a.allowed(w, r, op)
	if !ok {
		return nil, nil, false
	}
	j, found := a.Svc.Get(r.PathValue("id"))
	if !found || j.Principal() != principal(id) {
		// Someone else's job is as good as absent.
		a.refuse(w, r, id, http.StatusNotFound, "no job %s of yours (%s from %s)", r.PathValue("id"), id.Subject, id.Issuer)
		return nil, nil, false
	}
	return j, id, true
}

func (a *API) get(w http.ResponseWriter, r *http.Request) {
	if j, _, ok := a.own(w, r, store.ScopeComputeRead); ok {
		writeJSON(w, http.StatusOK, j)
	}
}

func (a *API) cancel(w http.ResponseWriter, r *http.Request) {
	j, id, ok := a.own(w, r, store.ScopeComputeCancel)
	if !ok {
		return
	}
	if err := a.Svc.Cancel(r.Context(), j.ID, principal(id)); err != nil {
		Error(w, http.StatusConflict, "%v", err)
		return
	}
	j, _ = a.Svc.Get(j.ID)
	writeJSON(w, http.StatusOK, j)
}

func (a *API) logs(w http.ResponseWriter, r *http.Request) {
	j, _, ok := a.own(w, r, store.ScopeComputeRead)
	if !ok {
		return
	}
	stream := r.URL.Query().Get("stream")
	if stream == "" {
		stream = "stdout"
	}
	if stream != "stdout" && stream != "stderr" {
		Error(w, http.StatusBadRequest, "stream must be stdout or stderr")
		return
	}
	rc, err := a.Svc.Logs(j.ID, stream)
	if err != nil {
		Error(w, http.StatusInternalServerError, "%v", err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.Copy(w, rc)
}

// outputs lists an ended job's files for `sitebox fetch` (stdout,
// stderr, declared outputs, each with the name it is saved as), or with
// ?file=NAME sends one of them.
func (a *API) outputs(w http.ResponseWriter, r *http.Request) {
	j, id, ok := a.own(w, r, store.ScopeComputeRead)
	if !ok {
		return
	}
	name := r.URL.Query().Get("file")
	if name == "" {
		files, err := a.Svc.Outputs(j.ID)
		if err != nil {
			a.refuse(w, r, id, http.StatusConflict, "%v", err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"files": files})
		return
	}
	rc, err := a.Svc.OpenOutput(j.ID, name)
	switch {
	case errors.Is(err, jobs.ErrNoOutput):
		a.refuse(w, r, id, http.StatusNotFound, "%v", err)
		return
	case err != nil:
		a.refuse(w, r, id, http.StatusConflict, "%v", err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	io.Copy(w, rc)
}

func (a *API) report(w http.ResponseWriter, r *http.Request) {
	if _, ok := a.allowed(w, r, store.ScopeComputeRead); !ok {
		return
	}
	since := 7 * 24 * time.Hour
	if v := r.URL.Query().Get("since"); v != "" {
		d, err := ParseSince(v)
		if err != nil {
			Error(w, http.StatusBadRequest, "%v", err)
			return
		}
		since = d
	}
	writeJSON(w, http.StatusOK, a.Svc.Report(time.Now().Add(-since)))
}

// ParseSince reads "7d", "12h", "90m".
func ParseSince(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		d, err := time.ParseDuration(n + "h")
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("since %q: want a duration like 7d or 12h", s)
		}
		return 24 * d, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("since %q: want a duration like 7d or 12h", s)
	}
	return d, nil
}
