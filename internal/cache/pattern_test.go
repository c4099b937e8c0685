package cache

import (
	"testing"
	"time"

	"sitebox/internal/units"
)

// A stream whose reads are served out of order (a FUSE mount's kernel
// read-ahead: 1 MiB requests in parallel) keeps its read-ahead across a
// hop ahead and a straggler behind; a reader picking pieces with small
// gaps is still no stream.
func TestObserveStreamOutOfOrder(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20 })
	e.file("s", 64<<20)
	f := e.open("/store/s")
	defer f.Close()
	const mib = 1 << 20
	read := func(block int64) (stream, ahead bool) {
		f.e.mu.Lock()
		defer f.e.mu.Unlock()
		return f.observe(block*mib, (block+1)*mib)
	}
	for b := range int64(4) {
		read(b)
	}
	if stream, ahead := read(4); !stream || !ahead {
		t.Fatalf("in-order stream: stream %v, ahead %v", stream, ahead)
	}
	// Blocks 5 and 6 are still being served when 7 arrives.
	if stream, ahead := read(7); !stream || !ahead {
		t.Fatalf("a hop of two blocks ahead ended the stream (stream %v, ahead %v)", stream, ahead)
	}
	for _, b := range []int64{5, 6, 8} {
		if stream, _ := read(b); !stream {
			t.Fatalf("block %d after the hop: not a stream", b)
		}
	}
	// Far ahead is a jump, not the same stream.
	if stream, ahead := read(40); stream || ahead {
		t.Fatalf("a jump of 31 blocks continued the stream")
	}

	// A reader picking pieces: small reads with small gaps never earn
	// read-ahead.
	g := e.open("/store/s")
	defer g.Close()
	for i := range int64(64) {
		off := i * 96 << 10
		g.e.mu.Lock()
		stream, ahead := g.observe(off, off+64<<10)
		g.e.mu.Unlock()
		if stream || ahead {
			t.Fatalf("read %d of a scattered reader counted as a stream", i)
		}
	}
}

// A stream that catches up with its read-ahead (each upstream read takes
// a round trip) widens its window, up to the bound; a reader the window
// keeps ahead of leaves it as configured.
func TestReadAheadWidensWhenCaughtUp(t *testing.T) {
	const mib = 1 << 20
	readAll := func(e *env, pause time.Duration) *File {
		want := e.file("s", 48*mib)
		f := e.open("/store/s")
		t.Cleanup(func() { f.Close() })
		for off := 0; off < len(want); off += mib {
			readWanting(t, f, want, int64(off), mib)
			time.Sleep(pause)
		}
		return f
	}
	slow := newEnv(t, func(c *Config) { c.BlockSize, c.RAM = mib, 256*mib })
	slow.up.delay = 20 * time.Millisecond
	f := readAll(slow, 0)
	slow.settle()
	if got := slow.up.bytes.Load(); got != 48*mib {
		t.Errorf("%d bytes upstream for a %d-byte file", got, 48*mib)
	}
	if got, limit := f.aheadBlocks(), slow.c.maxAheadBlocks(); got <= slow.c.cfg.ReadAhead || got > limit {
		t.Fatalf("read-ahead %d blocks after a stream that waited; want more than %d, at most %d", got, slow.c.cfg.ReadAhead, limit)
	}

	// With a quarter of the RAM in use, the stream keeps the configured
	// window: the rest is for other readers' misses.
	quarter := slow.c.cfg.RAM.Bytes() / 4
	slow.c.budget.used.Add(quarter)
	if got := f.aheadBlocks(); got != slow.c.cfg.ReadAhead {
		t.Errorf("read-ahead %d blocks with a quarter of the RAM in use, want %d", got, slow.c.cfg.ReadAhead)
	}
	slow.c.budget.used.Add(-quarter)

	fast := newEnv(t, func(c *Config) { c.BlockSize, c.RAM = mib, 256*mib })
	if g := readAll(fast, 20*time.Millisecond); g.aheadBlocks() != fast.c.cfg.ReadAhead {
		t.Fatalf("read-ahead widened to %d blocks for a reader it kept ahead of", g.aheadBlocks())
	}
}

// The window never takes more than a sixteenth of the cache's RAM.
func TestMaxAheadBlocksBoundedByRAM(t *testing.T) {
	for _, c := range []struct {
		ram, bs    int64
		ahead, max int
	}{
		{1 << 30, 1 << 20, 8, 32},
		{256 << 20, 1 << 20, 8, 16},
		{32 << 20, 1 << 20, 8, 8},
		{1 << 30, 4 << 20, 8, 16},
	} {
		cc := &Cache{cfg: Config{Settings: Settings{RAM: units.Size(c.ram), BlockSize: units.Size(c.bs), ReadAhead: c.ahead}}}
		if got := cc.maxAheadBlocks(); got != c.max {
			t.Errorf("RAM %d, blocks %d, read-ahead %d: bound %d, want %d", c.ram, c.bs, c.ahead, got, c.max)
		}
	}
}
