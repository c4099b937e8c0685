package cache

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"sitebox/internal/units"
)

// TestUpstreamHandlesCapped: reading many files one after another keeps
// at most UpstreamFiles of them open upstream, and every one is closed
// once idle; a file read again soon reuses its handle.
func TestUpstreamHandlesCapped(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.UpstreamFiles = 8
		c.UpstreamIdle = units.Duration(300 * time.Millisecond)
	})
	const n = 200
	want := make([][]byte, n)
	for i := range n {
		want[i] = e.file(fmt.Sprintf("f%03d", i), 1000+i)
	}
	u := e.c.ups.Route("/store").Servers()[0]
	var peak int64
	for i := range n {
		if got := e.read(fmt.Sprintf("/store/f%03d", i), 512); !bytes.Equal(got, want[i]) {
			t.Fatalf("file %d: wrong content", i)
		}
		peak = max(peak, u.OpenFiles())
	}
	if peak > 8 {
		t.Errorf("%d upstream files open at the peak, want at most the cap of 8", peak)
	}
	// Closes travel in the background: the upstream catches up soon.
	waitUntil(t, "the upstream to have the cap of 8 files open at most", func() bool { return e.up.openNow() <= 8 })
	waitUntil(t, "every upstream file closed after the idle time", func() bool { return e.up.openNow() == 0 })
}

// TestUpstreamHandleReused: a file reopened within the idle time is read
// over the handle its last reader left open.
func TestUpstreamHandleReused(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.UpstreamIdle = units.Duration(time.Minute) })
	e.file("a", 3*64<<10)
	f, err := e.c.Open(t.Context(), "/store/a")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1000)
	if _, err := f.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	opens := e.up.opens.Load()
	f, err = e.c.Open(t.Context(), "/store/a")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(buf, 64<<10); err != nil {
		t.Fatal(err)
	}
	if got := e.up.opens.Load(); got != opens {
		t.Errorf("reopening within the idle time opened the upstream file again (%d opens, want %d)", got, opens)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
