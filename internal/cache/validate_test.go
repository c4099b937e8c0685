package cache

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/units"
)

// statCounter counts the stats a cache asks of its upstream.
type statCounter struct {
	*countingStore
	stats atomic.Int64
}

func (s *statCounter) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	s.stats.Add(1)
	return s.countingStore.Stat(ctx, name)
}

func statCountingEnv(t *testing.T, silent bool, mod func(*Config)) (*env, *statCounter) {
	var sc *statCounter
	e := newEnv(t, func(c *Config) {
		up := c.Routes[0].Upstreams[0].Streams[0].(*countingStore)
		up.silentOpen = silent
		sc = &statCounter{countingStore: up}
		c.Routes[0].Upstreams[0].Streams = []store.Store{sc, sc, sc}
		if mod != nil {
			mod(c)
		}
	})
	return e, sc
}

// A file not cached is checked by the open its reads need anyway: one
// request upstream before the first byte, not a stat and then an open.
func TestOpenChecksByUpstreamOpen(t *testing.T) {
	e, sc := statCountingEnv(t, false, nil)
	want := e.file("f", 100<<10)
	f := e.open("/store/f")
	buf := make([]byte, len(want))
	if n, err := f.ReadAt(buf, 0); n != len(want) || !bytes.Equal(buf, want) {
		t.Fatalf("read %d bytes, %v", n, err)
	}
	f.Close()
	if got := sc.stats.Load(); got != 0 {
		t.Errorf("%d stats upstream, want 0", got)
	}
	if got := e.up.opens.Load(); got != 1 {
		t.Errorf("%d opens upstream, want 1", got)
	}
}

// An upstream whose files say nothing at open is asked by stat as before,
// and the open made for the check is closed, not leaked.
func TestOpenCheckFallsBackToStat(t *testing.T) {
	e, sc := statCountingEnv(t, true, func(c *Config) { c.UpstreamIdle = units.Duration(50 * time.Millisecond) })
	want := e.file("f", 100<<10)
	if got := e.read("/store/f", 64<<10); !bytes.Equal(got, want) {
		t.Fatal("data differs")
	}
	if got := sc.stats.Load(); got != 1 {
		t.Errorf("%d stats upstream, want 1", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.up.openNow() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := e.up.openNow(); n != 0 {
		t.Errorf("%d upstream files left open after the idle time", n)
	}
}

// A partly cached file that changed upstream is dropped on the open's
// answer, and the handle that open made (of the new version) serves the
// new bytes.
func TestOpenCheckDropsChangedPartialCopy(t *testing.T) {
	e, sc := statCountingEnv(t, false, func(c *Config) { c.Revalidate = units.Duration(time.Nanosecond) })
	e.file("v", 256<<10)
	f := e.open("/store/v")
	if _, err := f.ReadAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	e.settle()
	want := e.replace("v", 300<<10)
	if got := e.read("/store/v", 64<<10); !bytes.Equal(got, want) {
		t.Fatal("served bytes of the old version")
	}
	if got := sc.stats.Load(); got != 0 {
		t.Errorf("%d stats upstream, want 0", got)
	}
}

// A file missing at the only upstream is reported at once from the open's
// answer; a directory is still refused as one.
func TestOpenCheckMissingAndDirectory(t *testing.T) {
	e, sc := statCountingEnv(t, false, nil)
	if _, err := e.c.Open(context.Background(), "/store/none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing file: %v", err)
	}
	if got := sc.stats.Load(); got != 0 {
		t.Errorf("missing file: %d stats upstream, want 0", got)
	}
	os.MkdirAll(filepath.Join(e.src, "dir"), 0o755)
	if _, err := e.c.Open(context.Background(), "/store/dir"); !errors.Is(err, store.ErrIsDir) {
		t.Errorf("open of a directory: %v", err)
	}
}

// A first upstream that does not answer the open that checks a file is
// not asked again by stat: the check goes on to the second, so a dead
// first upstream costs a client one failure (a timeout, on a real link),
// as it did when the check was a stat.
func TestOpenCheckSkipsDeadFirstUpstream(t *testing.T) {
	e, first := statCountingEnv(t, false, nil)
	second := e.withSecondUpstream()
	want := e.file("f", 100<<10)
	e.up.fail.Store(true)
	opens := e.up.opens.Load()
	if got := e.read("/store/f", 64<<10); !bytes.Equal(got, want) {
		t.Fatal("data differs")
	}
	if n := first.stats.Load(); n != 0 {
		t.Errorf("the dead first upstream was asked %d stats after its open failed", n)
	}
	if e.up.opens.Load() != opens || second.bytes.Load() == 0 {
		t.Errorf("first upstream opens %d→%d, second upstream read %d bytes", opens, e.up.opens.Load(), second.bytes.Load())
	}
}
