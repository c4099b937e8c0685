package webdav

import (
	"net/http"
	"strings"

	"sitebox/internal/auth"
	"sitebox/internal/store"
)

// negotiateToken is the SPNEGO token of an "Authorization: Negotiate"
// header, "" if the request has none.
func negotiateToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Negotiate") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// negotiate authenticates a request that carries a Negotiate token (a
// SPNEGO Kerberos ticket, auth.Negotiate), and reports whether it did
// carry one. A refused ticket becomes the
// request's AuthError: the namespace policy denies with its reason.
func (h *Handler) negotiate(r *http.Request, req *store.Request) bool {
	tok := negotiateToken(r)
	if tok == "" || !h.cfg.Auth.Takes(auth.MethodKrb5) {
		return false
	}
	id, err := h.cfg.Auth.Authenticate(r.Context(), auth.Negotiate(tok))
	if err != nil {
		h.log.Info("kerberos ticket refused", "client", r.RemoteAddr, "reason", err.Error())
		req.AuthError = err
		return true
	}
	h.log.Debug("authenticated", append([]any{"protocol", "krb5", "client", r.RemoteAddr}, auth.LogAttrs(id)...)...)
	req.Identity = id
	return true
}

// challenge sets the WWW-Authenticate headers of a 401: Bearer when
// tokens are taken, Negotiate when Kerberos is (curl --negotiate and
// browsers answer only a Negotiate challenge).
func (h *Handler) challenge(w http.ResponseWriter, bearer string) {
	if h.cfg.Auth.Takes(auth.MethodToken) {
		w.Header().Add("WWW-Authenticate", bearer)
	}
	if h.cfg.Auth.Takes(auth.MethodKrb5) {
		w.Header().Add("WWW-Authenticate", "Negotiate")
	}
}
