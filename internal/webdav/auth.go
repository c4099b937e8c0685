package webdav

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/tpc/tpcallow"
)

// bearerToken is the request's token: the Authorization header
// ("Bearer <jwt>"), else the authz= query parameter XRootD clients and
// davix use (see store.Request.AuthzToken).
func bearerToken(r *http.Request, req *store.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if scheme, tok, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
	}
	return req.AuthzToken()
}

// authenticate fills in who the client is: a verified credential
// becomes the request's identity; a refused one its AuthError, for the
// namespace policy to deny with. A Negotiate header is its own path; a
// bearer token (on a box that verifies tokens) wins over a client
// certificate, which counts only when neither is sent. It returns what
// refusals should add: VOMS attributes not accepted.
func (h *Handler) authenticate(r *http.Request, req *store.Request) (note string) {
	req.TLS = r.TLS != nil
	if h.negotiate(r, req) {
		return ""
	}
	if tok := bearerToken(r, req); tok != "" && h.cfg.Auth.Takes(auth.MethodToken) {
		h.verifyToken(r, req, tok)
		return ""
	}
	id, note, err := h.cfg.Certificates.Identity(r)
	switch {
	case err != nil:
		req.AuthError = err // logged where it was decided, once per connection
	case id != nil:
		req.Identity = id
	}
	return note
}

// verifyToken verifies a bearer token.
func (h *Handler) verifyToken(r *http.Request, req *store.Request, tok string) {
	id, err := h.cfg.Auth.Authenticate(r.Context(), auth.Token(tok))
	if err != nil {
		// Debug: the namespace policy logs the refusal, with this reason,
		// when it denies the request.
		h.log.Debug("token refused", "client", r.RemoteAddr, "reason", err.Error())
		req.AuthError = err
		return
	}
	h.log.Debug("authenticated", append([]any{"client", r.RemoteAddr}, auth.LogAttrs(id)...)...)
	req.Identity = id
}

// authStatus refines a permission denial on a box that takes tokens: 401
// with a Bearer challenge when the client presented no usable token (RFC
// 6750), 403 when its token does not grant the request.
func (h *Handler) authStatus(w http.ResponseWriter, r *http.Request, err error, code int) int {
	if !h.cfg.Auth.Takes(auth.MethodToken) && !h.cfg.Auth.Takes(auth.MethodKrb5) || code != http.StatusForbidden || !errors.Is(err, store.ErrPermission) || errors.Is(err, store.ErrInsecure) || errors.Is(err, tpcallow.ErrRefused) {
		return code // a TLS requirement or the site's TPC peers are no token's business: 403
	}
	req := store.RequestFrom(r.Context())
	var refused *CertificateError
	if req.Identity != nil || errors.As(req.AuthError, &refused) {
		return code // a certificate has no challenge to answer: 403 with the reason
	}
	challenge := `Bearer realm="sitebox"`
	if req.AuthError != nil {
		challenge += `, error="invalid_token"`
	}
	h.challenge(w, challenge)
	return http.StatusUnauthorized
}

// insecure refuses moving f over a plain HTTP connection when its
// namespace needs integrity protection: HTTP has no per-block checksums,
// so TLS is the only way to protect the bytes.
func insecure(r *http.Request, f any, op, name string) error {
	if rc, ok := f.(store.ChecksumRequirer); !ok || !rc.RequiresChecksums() || r.TLS != nil {
		return nil
	}
	return &store.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: %w: its namespace requires integrity protection; use https://", store.ErrPermission, store.ErrInsecure)}
}
