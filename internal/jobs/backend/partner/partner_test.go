package partner

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"sitebox/internal/jobs"
	"sitebox/internal/jobs/api"
)

// A partner's 404 means the job is gone there; any other failure, even
// one whose text holds "404" (a job id, a port), is only an error.
func TestBoxBackendPollNotFound(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+api.Prefix+"/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			api.Error(w, http.StatusUnauthorized, "no token")
			return
		}
		switch r.PathValue("id") {
		default:
			api.Error(w, http.StatusNotFound, "no job %s of yours", r.PathValue("id"))
		case "404.0":
			api.Error(w, http.StatusInternalServerError, "database busy")
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := &Backend{API: api.Client{URL: srv.URL, HTTP: srv.Client(), Token: func() (string, error) { return "tok", nil }}}

	ups, err := b.Poll(context.Background(), []*jobs.Job{{ID: "1.0", Remote: "7.0"}})
	if err != nil || len(ups) != 1 || ups[0].State != jobs.Lost {
		t.Fatalf("unknown job: %+v, %v", ups, err)
	}
	ups, err = b.Poll(context.Background(), []*jobs.Job{{ID: "2.0", Remote: "404.0"}})
	if err == nil || len(ups) != 0 {
		t.Fatalf("server error: %+v, %v", ups, err)
	}
	want := "GET " + api.Prefix + "/404.0: 500 Internal Server Error: database busy"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
