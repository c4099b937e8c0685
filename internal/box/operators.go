package box

import (
	"fmt"
	"net/http"
	"strings"

	"sitebox/internal/store"
	"sitebox/internal/web"
)

// dashboardViewer decides who sees the dashboard's names: a request with
// a bearer token this box verifies, whose (issuer, subject) is listed in
// [[auth.operator]]; any other valid identity sees the anonymous view.
// Refusals are logged with their reason and who asked, never the token.
func (b *Box) dashboardViewer() web.Viewer {
	log := b.log.With("component", "dashboard")
	return web.ViewerFunc(func(r *http.Request) (string, error) {
		tok := web.BearerToken(r)
		if tok == "" {
			return "", nil
		}
		if b.tokens == nil {
			err := fmt.Errorf("%w: this box verifies no tokens (configure [[auth.issuer]] or site_issuer, and [[auth.operator]])", web.ErrNotOperator)
			log.Info("dashboard token refused", "client", r.RemoteAddr, "reason", err.Error())
			return "", err
		}
		id, err := b.tokens.Verify(r.Context(), tok)
		if err != nil {
			log.Info("dashboard token refused", "client", r.RemoteAddr, "reason", err.Error())
			return "", err
		}
		if !b.isOperator(id) {
			err := fmt.Errorf("%w: subject %q of issuer %s is not listed in [[auth.operator]]", web.ErrNotOperator, id.Subject, id.Issuer)
			log.Info("dashboard names hidden from a token that is no operator's", "client", r.RemoteAddr, "issuer", id.Issuer, "subject", id.Subject, "reason", err.Error())
			return "", err
		}
		log.Debug("dashboard names shown", "client", r.RemoteAddr, "issuer", id.Issuer, "subject", id.Subject)
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
