package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	jobsapi "sitebox/internal/jobs/api"
)

// The job commands print the box's own message for a refusal, else the
// status and body; the token is sent on every request.
func TestJobClientErrors(t *testing.T) {
	t.Setenv("BEARER_TOKEN", "tok")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer tok":
			http.Error(w, "no token", http.StatusUnauthorized)
		case r.Method == http.MethodDelete:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":"job 1.0 has already ended (completed)"}`))
		default:
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c := &jobClient{url: srv.URL}
	for _, tc := range []struct{ method, want string }{
		{http.MethodDelete, "job 1.0 has already ended (completed)"},
		{http.MethodGet, "503 Service Unavailable: down for maintenance"},
		{http.MethodGet, "503 Service Unavailable: down for maintenance"}, // the client made once serves again
	} {
		err := c.do(tc.method, jobsapi.Prefix+"/1.0", nil, nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.method, err, tc.want)
		}
	}
}
