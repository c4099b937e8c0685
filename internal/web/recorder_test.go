package web

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"
)

// fakeTotals hands out the next map of a script on each call.
type fakeTotals struct {
	mu   sync.Mutex
	seq  []map[string]int64
	next int
}

func (f *fakeTotals) totals() map[string]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.seq[min(f.next, len(f.seq)-1)]
	f.next++
	return m
}

func TestRecorderRates(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		seq   []map[string]int64
		every time.Duration
		want  map[string][]float64 // bytes/s per key
	}{
		{"no samples yet", nil, 5 * time.Second, map[string][]float64{}},
		{"one sample is only a baseline", []map[string]int64{{"root/out": 10}}, 5 * time.Second, map[string][]float64{}},
		{"steady out", []map[string]int64{{"root/out": 0}, {"root/out": 5_000_000}, {"root/out": 15_000_000}}, 5 * time.Second,
			map[string][]float64{"root/out": {1_000_000, 2_000_000}}},
		{"a key appears with its first byte", []map[string]int64{{}, {"https/in": 100}, {"https/in": 100, "root/out": 50}}, 10 * time.Second,
			map[string][]float64{"https/in": {10, 0}, "root/out": {0, 5}}},
		{"a counter going back reads zero, not negative", []map[string]int64{{"root/in": 100}, {"root/in": 40}}, time.Second,
			map[string][]float64{"root/in": {0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTotals{seq: tc.seq}
			r, err := NewRecorder(RecorderConfig{Interval: tc.every}, ft.totals)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.seq {
				r.sample(t0.Add(time.Duration(i) * tc.every))
			}
			got := r.Rates()
			if got.IntervalSeconds != tc.every.Seconds() || got.WindowSeconds != 3600 {
				t.Errorf("interval %v window %v; want %v and 3600", got.IntervalSeconds, got.WindowSeconds, tc.every.Seconds())
			}
			if len(got.Series) != len(tc.want) {
				t.Fatalf("series %v; want %v", got.Series, tc.want)
			}
			for k, want := range tc.want {
				if len(got.Series[k]) != len(want) || len(got.Times) != len(want) {
					t.Fatalf("%s: %v at %v; want %v", k, got.Series[k], got.Times, want)
				}
				for i := range want {
					if math.Abs(got.Series[k][i]-want[i]) > 1e-9 {
						t.Errorf("%s[%d] = %v; want %v", k, i, got.Series[k][i], want[i])
					}
					if wantT := t0.Add(time.Duration(i+1) * tc.every).UnixMilli(); got.Times[i] != wantT {
						t.Errorf("times[%d] = %d; want %d", i, got.Times[i], wantT)
					}
				}
			}
		})
	}
}

// The ring keeps Window/Interval rates: older ones fall off, newest last.
func TestRecorderRingKeepsWindow(t *testing.T) {
	n := int64(0)
	r, err := NewRecorder(RecorderConfig{Interval: time.Second, Window: 3 * time.Second},
		func() map[string]int64 { n += 1000; return map[string]int64{"root/out": n * n} })
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	for i := range 10 {
		r.sample(t0.Add(time.Duration(i) * time.Second))
	}
	got := r.Rates()
	if len(got.Times) != 3 {
		t.Fatalf("%d rates kept; want 3 (window/interval)", len(got.Times))
	}
	// Samples 7..9 end the kept intervals: rate_i = (i+1)² - i² thousand².
	for j, i := range []int64{7, 8, 9} {
		want := float64(((i+1)*(i+1) - i*i) * 1_000_000)
		if got.Times[j] != t0.Add(time.Duration(i)*time.Second).UnixMilli() || got.Series["root/out"][j] != want {
			t.Errorf("point %d = (%d, %v); want (%d, %v)", j, got.Times[j], got.Series["root/out"][j],
				t0.Add(time.Duration(i)*time.Second).UnixMilli(), want)
		}
	}
}

func TestRecorderConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  RecorderConfig
		ok   bool
	}{
		{"zero takes defaults", RecorderConfig{}, true},
		{"test speed", RecorderConfig{Interval: 10 * time.Millisecond, Window: time.Second}, true},
		{"negative interval", RecorderConfig{Interval: -time.Second}, false},
		{"negative window", RecorderConfig{Window: -time.Second}, false},
		{"window shorter than the default interval", RecorderConfig{Window: time.Second}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v; want ok=%v", err, tc.ok)
			}
			if _, err := NewRecorder(tc.cfg, func() map[string]int64 { return nil }); (err == nil) != tc.ok {
				t.Fatalf("NewRecorder: %v; want ok=%v", err, tc.ok)
			}
		})
	}
	if _, err := NewRecorder(RecorderConfig{}, nil); !errors.Is(err, ErrNoTotals) {
		t.Fatalf("NewRecorder without totals: %v; want ErrNoTotals", err)
	}
}

// Run samples at once and on every tick, and returns when ctx ends.
func TestRecorderRun(t *testing.T) {
	var mu sync.Mutex
	total := int64(0)
	r, err := NewRecorder(RecorderConfig{Interval: 10 * time.Millisecond, Window: time.Second}, func() map[string]int64 {
		mu.Lock()
		defer mu.Unlock()
		total += 1 << 20
		return map[string]int64{"https/out": total}
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for len(r.Rates().Times) < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	got := r.Rates()
	if len(got.Times) < 3 {
		t.Fatalf("%d rates after sampling every 10ms; want at least 3", len(got.Times))
	}
	for i, v := range got.Series["https/out"] {
		if v <= 0 {
			t.Errorf("rate %d = %v; want > 0 (1 MiB per sample)", i, v)
		}
	}
}
