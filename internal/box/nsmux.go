package box

import (
	"net/http"
	"strings"
)

// namespaceFirst serves r with mux, except a request whose path
// http.ServeMux would answer with a redirect to its cleaned form: that
// goes to the namespace handler ns as it came. The cleaning would change
// what the path names: "DELETE /store/d/." (refused: "." is d itself)
// would be sent to "/store/d", and "/store/f/." (a directory or nothing)
// to the file f; a client following the redirect would act on what it
// never named. The namespace handler cleans paths itself and keeps what
// their spelling says (store.Name).
func namespaceFirst(mux *http.ServeMux, ns http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if muxWouldClean(r.URL.Path) {
			ns.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// muxWouldClean reports whether http.ServeMux redirects a request for p:
// p has an empty (but not a final), "." or ".." element.
func muxWouldClean(p string) bool {
	elems := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, e := range elems {
		if e == "." || e == ".." || e == "" && i < len(elems)-1 {
			return true
		}
	}
	return false
}
