package box

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/web"
)

// dashboardViewer decides who sees the dashboard's names: a request with
// a bearer token the box's authenticator verifies (or else a client
// certificate, verified by it once per connection), whose (issuer, subject) is listed in
// [[auth.operator]]; any other valid identity sees the anonymous view.
// Refusals are logged with their reason and who asked, never the token.
func (b *Box) dashboardViewer() web.Viewer {
	log := b.log.With("component", "dashboard")
	return web.ViewerFunc(func(r *http.Request) (string, error) {
		tok := web.BearerToken(r)
		if tok == "" {
			return b.certificateOperator(r, log)
		}
		if !b.authn.Takes(auth.MethodToken) {
			err := fmt.Errorf("%w: this box verifies no tokens (configure [[auth.issuer]] or site_issuer, and [[auth.operator]])", web.ErrNotOperator)
			log.Info("dashboard token refused", "client", r.RemoteAddr, "reason", err.Error())
			return "", err
		}
		id, err := b.authn.Authenticate(r.Context(), auth.Token(tok))
		if err != nil {
			log.Info("dashboard token refused", "client", r.RemoteAddr, "reason", err.Error())
			return "", err
		}
		if !b.isOperator(id) {
			err := fmt.Errorf("%w: subject %q of issuer %s is not listed in [[auth.operator]]", web.ErrNotOperator, id.Subject, id.Issuer)
			log.Info("dashboard names hidden from a token that is no operator's", append([]any{"client", r.RemoteAddr}, append(auth.LogAttrs(id), "reason", err.Error())...)...)
			return "", err
		}
		log.Debug("dashboard names shown", append([]any{"client", r.RemoteAddr}, auth.LogAttrs(id)...)...)
		return fmt.Sprintf("%s (%s)", id.Subject, id.Issuer), nil
	})
}

// isOperator reports whether id's (issuer, subject) is an [[auth.operator]];
// an operator without an issuer means the site issuer.
func (b *Box) isOperator(id *store.Identity) bool {
	iss := strings.TrimSuffix(id.Issuer, "/")
	for _, op := range b.cfg.Auth.Operators {
		want := strings.TrimSuffix(op.Issuer, "/")
		if want == "" {
			if b.issuer == nil {
				continue
			}
			want = b.issuer.URL()
		}
		if want == iss && op.Subject == id.Subject {
			return true
		}
	}
	return false
}

// certificateOperator decides for a request without a token by its client
// certificate: an operator's sees the names; any other, refused ones
// included, gets the anonymous view with the reason. Unlike a token, a
// certificate is not something the page sent: browsers offer the ones
// installed in them, often expired, and that must not lock anyone out of
// the totals.
func (b *Box) certificateOperator(r *http.Request, log *slog.Logger) (string, error) {
	id, err := b.certificateViewer(r)
	switch {
	case err != nil:
		log.Info("dashboard client certificate refused", "client", r.RemoteAddr, "reason", err.Error())
		return "", fmt.Errorf("%w: %v", web.ErrNotOperator, err)
	case id == nil:
		return "", nil
	case !b.isOperator(id):
		err := fmt.Errorf("%w: subject %q of issuer %s is not listed in [[auth.operator]]%s", web.ErrNotOperator, id.Subject, id.Issuer, x509Operator(id))
		log.Info("dashboard names hidden from a certificate that is no operator's", append([]any{"client", r.RemoteAddr}, auth.LogAttrs(id)...)...)
		return "", err
	}
	log.Debug("dashboard names shown", append([]any{"client", r.RemoteAddr}, auth.LogAttrs(id)...)...)
	return fmt.Sprintf("%s (%s)", id.Subject, id.Issuer), nil
}
