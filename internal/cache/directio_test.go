package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/dio"
)

// The same file, ending in a partial block, through O_DIRECT and through
// the page cache: byte-identical reads, a restart keeps it, and a flipped
// byte in the last (padded) block is caught and refetched.
func TestBothIOModes(t *testing.T) {
	for _, pageCache := range []bool{false, true} {
		name := "direct"
		if pageCache {
			name = "page cache"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.PageCache = pageCache })
			if !pageCache && !e.c.disk.Direct() {
				t.Logf("%s does not support O_DIRECT; both runs use the page cache", e.dir)
			}
			size := 3*64<<10 + 1234
			want := e.file("m", size)
			if got := e.read("/store/m", 50000); !bytes.Equal(got, want) {
				t.Fatal("first read differs")
			}
			e.settle()
			p := filepath.Join(e.dir, "data/store/m")
			if fi, err := os.Stat(p); err != nil || fi.Size() != dio.AlignUp(int64(size)) {
				t.Fatalf("data file %v, %v; want size %d", fi, err, dio.AlignUp(int64(size)))
			}
			e.restart()
			before := e.up.bytes.Load()
			if got := e.read("/store/m", 1<<20); !bytes.Equal(got, want) {
				t.Fatal("read after restart differs")
			}
			if d := e.up.bytes.Load() - before; d != 0 {
				t.Fatalf("read after restart fetched %d bytes", d)
			}
			df, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			at := int64(size - 10) // inside the last, partial block
			b := []byte{0}
			df.ReadAt(b, at)
			b[0] ^= 1
			df.WriteAt(b, at)
			// Bad bytes are the disk's: the page cache keeps what was
			// checked (see checked.go), so drop it as the kernel would.
			dropPageCache(t, df)
			df.Close()
			before = e.up.bytes.Load()
			if got := e.read("/store/m", 4096); !bytes.Equal(got, want) {
				t.Fatal("served the flipped byte")
			}
			e.settle()
			if d := e.up.bytes.Load() - before; d != 1234 {
				t.Fatalf("refetched %d bytes, want the last block's 1234", d)
			}
		})
	}
}
