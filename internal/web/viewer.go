package web

import (
	"errors"
	"net/http"
	"strings"
)

// Viewer tells who asks for the snapshot. Anonymous visitors see totals,
// rates and health only: file names, user subjects and anything else
// naming a person or a file is left out of their snapshot. An operator
// sees everything.
type Viewer interface {
	// Operator returns a description of the operator the request proves
	// to be ("alice (https://issuer)"), "" with a nil error for a request
	// without credentials, or an error saying why the credentials it
	// carries do not make it an operator. An error wrapping
	// ErrNotOperator is a valid identity that is no operator (the
	// anonymous view, with the reason); any other a refused token (401).
	Operator(r *http.Request) (string, error)
}

// ViewerFunc adapts a function to Viewer.
type ViewerFunc func(r *http.Request) (string, error)

// Operator calls f.
func (f ViewerFunc) Operator(r *http.Request) (string, error) { return f(r) }

// ErrNotOperator is a verified identity that may not see the names.
var ErrNotOperator = errors.New("not a dashboard operator")

// BearerToken is the token of an "Authorization: Bearer" header, "" if
// there is none. The dashboard takes no token in the URL: URLs end up in
// logs and browser history.
func BearerToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// hideNames removes from s what names a person or a file: the top files
// and users, and the cache's disk error (it may quote a path). Counts,
// rates, VOs and the servers of the federation stay.
func (s *Snapshot) hideNames() {
	s.NamesHidden = true
	s.Transfers.Files, s.Transfers.Users = nil, nil
	if s.Cache != nil && s.Cache.DiskError != "" {
		s.Cache.DiskError = "the cache disk has a problem (an operator's token shows it)"
	}
}
