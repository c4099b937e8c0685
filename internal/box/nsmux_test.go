package box

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestNamespaceFirst: a path ServeMux would redirect to a cleaned form
// reaches the namespace as written; others are served by the mux.
func TestNamespaceFirst(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("api")) })
	ns := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ns " + r.URL.Path)) })
	mux.Handle("/", ns)
	h := namespaceFirst(mux, ns)
	for _, c := range []struct{ path, want string }{
		{"/api/x", "api"},
		{"/store/f", "ns /store/f"},
		{"/store/d/", "ns /store/d/"},
		{"/store/d/.", "ns /store/d/."},
		{"/store/d/..", "ns /store/d/.."},
		{"/store//f", "ns /store//f"},
		{"/api/../store/f", "ns /api/../store/f"},
		{"/", "ns /"},
	} {
		req := httptest.NewRequest(http.MethodDelete, "http://box"+c.path, nil)
		req.URL.Path = c.path // as the client sent it, unnormalised
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || rec.Body.String() != c.want {
			t.Errorf("%s: %d %q, want 200 %q", c.path, rec.Code, rec.Body.String(), c.want)
		}
	}
}
