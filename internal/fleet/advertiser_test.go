package fleet

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A director that refuses the ads is reported as a failure until it
// takes them again.
func TestAdvertiserReportsFailures(t *testing.T) {
	var refuse atomic.Bool
	refuse.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() {
			http.Error(w, "unknown member", http.StatusForbidden)
		}
	}))
	defer srv.Close()
	a := &Advertiser[map[string]string]{To: []string{srv.URL}, Interval: 20 * time.Millisecond, Client: srv.Client(),
		Ads: func() []map[string]string { return []map[string]string{{"name": "b"}} }, Log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitUntil(t, "failure reported", func() bool { return strings.Contains(a.Failures()[srv.URL], "unknown member") })
	refuse.Store(false)
	waitUntil(t, "failure cleared", func() bool { return len(a.Failures()) == 0 })
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The director's root:// address, from its answer to an ad, is where the
// box sends clients while it drains; anything but host:port is ignored.
func TestAdvertiserLearnsTheDirectorRoot(t *testing.T) {
	tests := []struct{ name, header, want string }{
		{"host and port", "dir.example.org:1095", "dir.example.org:1095"},
		{"none", "", ""},
		{"a URL", "root://evil.example.org:1094//x", ""},
		{"no port", "dir.example.org", ""},
		{"port out of range", "dir.example.org:70000", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.header != "" {
					w.Header().Set(HeaderDirectorRoot, tc.header)
				}
				got.Add(1)
				w.WriteHeader(http.StatusNoContent)
			}))
			defer srv.Close()
			a := &Advertiser[map[string]string]{To: []string{srv.URL}, Interval: 20 * time.Millisecond, Client: srv.Client(),
				Ads: func() []map[string]string { return []map[string]string{{"name": "b"}} }, Log: slog.New(slog.DiscardHandler)}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- a.Run(ctx) }()
			defer func() { cancel(); <-done }()
			waitUntil(t, "two ads taken", func() bool { return got.Load() >= 2 })
			if r := a.DirectorRoot(); r != tc.want {
				t.Errorf("DirectorRoot = %q; want %q", r, tc.want)
			}
		})
	}
}
