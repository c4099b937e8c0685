package webdav

import (
	"net/http"
	"strings"

	"sitebox/internal/store"
)

// NegotiateVerifier checks the token of an "Authorization: Negotiate"
// header (SPNEGO with Kerberos) and maps it to a local identity.
type NegotiateVerifier interface {
	VerifyNegotiate(token string) (*store.Identity, error)
}

// negotiateToken is the SPNEGO token of an "Authorization: Negotiate"
// header, "" if the request has none.
func negotiateToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Negotiate") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// negotiate authenticates a request that carries a Negotiate token, and
// reports whether it did carry one. A refused ticket becomes the
// request's AuthError: the namespace policy denies with its reason.
func (h *Handler) negotiate(r *http.Request, req *store.Request) bool {
	tok := negotiateToken(r)
	if tok == "" || h.cfg.Kerberos == nil {
		return false
	}
	id, err := h.cfg.Kerberos.VerifyNegotiate(tok)
	if err != nil {
		h.log.Info("kerberos ticket refused", "client", r.RemoteAddr, "reason", err.Error())
		req.AuthError = err
		return true
	}
	h.log.Debug("authenticated", "protocol", "krb5", "client", r.RemoteAddr, "issuer", id.Issuer, "subject", id.Subject, "groups", id.Groups)
	req.Identity = id
	return true
}

// challenge sets the WWW-Authenticate headers of a 401: Bearer when
// tokens are taken, Negotiate when Kerberos is (curl --negotiate and
// browsers answer only a Negotiate challenge).
func (h *Handler) challenge(w http.ResponseWriter, bearer string) {
	if h.cfg.Tokens != nil {
		w.Header().Add("WWW-Authenticate", bearer)
	}
	if h.cfg.Kerberos != nil {
		w.Header().Add("WWW-Authenticate", "Negotiate")
	}
}
