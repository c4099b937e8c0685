package cache

import "testing"

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
