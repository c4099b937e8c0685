package box

import (
	"testing"
	"time"
)

// The dashboard stays red for a minute after the cache's upstream errors
// last rose, then turns back.
func TestUpstreamWatch(t *testing.T) {
	var w upstreamWatch
	t0 := time.Now()
	steps := []struct {
		name   string
		errors int64
		at     time.Duration
		want   int64
	}{
		{"no errors", 0, 0, 0},
		{"three errors", 3, time.Second, 3},
		{"two more", 5, 10 * time.Second, 5},
		{"quiet but within the minute", 5, 60 * time.Second, 5},
		{"quiet for a minute", 5, 80 * time.Second, 0},
		{"a new one", 6, 90 * time.Second, 1},
	}
	for _, s := range steps {
		if got := w.note(s.errors, t0.Add(s.at)); got != s.want {
			t.Errorf("%s: %d errors in the window, want %d", s.name, got, s.want)
		}
	}
}
