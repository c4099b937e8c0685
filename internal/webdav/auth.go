package webdav

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"sitebox/internal/store"
)

// TokenVerifier checks a bearer token and says who it identifies; the
// error names why a token is refused.
type TokenVerifier interface {
	Verify(ctx context.Context, raw string) (*store.Identity, error)
}

// bearerToken is the request's token: the Authorization header
// ("Bearer <jwt>"), else the authz= query parameter XRootD clients and
// davix use ("Bearer%20<jwt>", decoded by the URL parser, or bare).
func bearerToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if scheme, tok, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
	}
	v := strings.TrimSpace(r.URL.Query().Get("authz"))
	if scheme, tok, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
		v = tok
	}
	return strings.TrimSpace(v)
}

// authenticate fills in who the client is: a verified token becomes the
// request's identity; a refused one its AuthError, for the namespace
// policy to deny with.
func (h *Handler) authenticate(r *http.Request, req *store.Request) {
	req.TLS = r.TLS != nil
	if h.cfg.Tokens == nil {
		return
	}
	tok := bearerToken(r)
	if tok == "" {
		return
	}
	id, err := h.cfg.Tokens.Verify(r.Context(), tok)
	if err != nil {
		req.AuthError = err
		return
	}
	req.Identity = id
}

// authStatus refines a permission denial on a box that takes tokens: 401
// with a Bearer challenge when the client presented no usable token (RFC
// 6750), 403 when its token does not grant the request.
func (h *Handler) authStatus(w http.ResponseWriter, r *http.Request, err error, code int) int {
	if h.cfg.Tokens == nil || code != http.StatusForbidden || !errors.Is(err, store.ErrPermission) || errors.Is(err, store.ErrInsecure) {
		return code // a TLS requirement is no token's business: 403
	}
	req := store.RequestFrom(r.Context())
	if req.Identity != nil {
		return code
	}
	challenge := `Bearer realm="sitebox"`
	if req.AuthError != nil {
		challenge += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	return http.StatusUnauthorized
}

// checksumRequirer is implemented by files of integrity-protected
// namespaces opened over a plain connection (see the auth guard).
type checksumRequirer interface{ RequiresChecksums() bool }

// insecure refuses moving f over a plain HTTP connection when its
// namespace needs integrity protection: HTTP has no per-block checksums,
// so TLS is the only way to protect the bytes.
func insecure(r *http.Request, f any, op, name string) error {
	if rc, ok := f.(checksumRequirer); !ok || !rc.RequiresChecksums() || r.TLS != nil {
		return nil
	}
	return &store.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: %w: its namespace requires integrity protection; use https://", store.ErrPermission, store.ErrInsecure)}
}
