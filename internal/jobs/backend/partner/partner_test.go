package partner

import (
	"context"
	"encoding/json"
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

// Find names the partner's job keyed with the box's job id that is not
// an earlier attempt's, "" when there is none; the key goes with every
// submission.
func TestBoxBackendFind(t *testing.T) {
	var gotKey string
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+api.Prefix, func(w http.ResponseWriter, r *http.Request) {
		var sub api.Submission
		json.NewDecoder(r.Body).Decode(&sub)
		gotKey = sub.Key
		w.Write([]byte(`{"jobs":[{"id":"9.0"}]}`))
	})
	mux.HandleFunc("GET "+api.Prefix, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("key") {
		case "3.0":
			w.Write([]byte(`{"jobs":[{"id":"5.0","key":"3.0"},{"id":"8.0","key":"3.0"}]}`))
		default:
			w.Write([]byte(`{"jobs":[]}`))
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := &Backend{API: api.Client{URL: srv.URL, HTTP: srv.Client(), Token: func() (string, error) { return "tok", nil }}}
	ctx := context.Background()
	if id, err := b.Submit(ctx, &jobs.Job{ID: "3.0"}); err != nil || id != "9.0" || gotKey != "3.0" {
		t.Errorf("submit: %q %v, key %q", id, err, gotKey)
	}
	if id, err := b.Find(ctx, &jobs.Job{ID: "3.0", Remotes: []string{"8.0"}}); err != nil || id != "5.0" {
		t.Errorf("find with an earlier attempt 8.0: %q %v", id, err)
	}
	if id, err := b.Find(ctx, &jobs.Job{ID: "3.0", Remotes: []string{"5.0", "8.0"}}); err != nil || id != "" {
		t.Errorf("find with both earlier: %q %v", id, err)
	}
	if id, err := b.Find(ctx, &jobs.Job{ID: "4.0"}); err != nil || id != "" {
		t.Errorf("find of a job never sent: %q %v", id, err)
	}
}
