package auth

import (
	"encoding/json"
	"net/http"
	"net/url"
)

// Well-known paths below the issuer URL.
const (
	DiscoveryPath = "/.well-known/openid-configuration"
	JWKSPath      = "/.well-known/jwks.json"
)

// Handler serves the issuer's discovery document and JWKS at the issuer
// URL's path + DiscoveryPath and + JWKSPath (mount it at the server root:
// for https://host/site it answers /site/.well-known/…). Anything else is
// 404, methods other than GET and HEAD 405.
func (is *Issuer) Handler() http.Handler {
	base := ""
	if u, err := url.Parse(is.url); err == nil {
		base = u.EscapedPath()
	}
	disc, _ := json.Marshal(map[string]any{
		"issuer":                                is.url,
		"jwks_uri":                              is.url + JWKSPath,
		"id_token_signing_alg_values_supported": []string{"ES256"},
		"token_signing_alg_values_supported":    []string{"ES256"},
		"scopes_supported":                      []string{"storage.read", "storage.create", "storage.modify", "storage.stage"},
		"subject_types_supported":               []string{"public"},
		"response_types_supported":              []string{"token"},
	})
	mux := http.NewServeMux()
	serve := func(body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "public, max-age=600")
			w.Write(body)
		}
	}
	mux.Handle("GET "+base+DiscoveryPath, serve(disc))
	mux.Handle("GET "+base+JWKSPath, serve(is.jwks))
	return mux
}
