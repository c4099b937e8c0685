package cksum

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestKnownSums(t *testing.T) {
	// Reference values from zlib's adler32 and the iSCSI CRC32C test vector.
	for _, c := range []struct{ algo, in, want string }{
		{"adler32", "Wikipedia", "11e60398"},
		{"crc32c", "123456789", "e3069283"},
		{"ADLER32", "", "00000001"},
		{"md5", "hello world\n", "6f5902ac237024bdd0c176cb93063dc4"},
		{"MD5", "", "d41d8cd98f00b204e9800998ecf8427e"},
	} {
		got, err := Compute(strings.NewReader(c.in), c.algo)
		if err != nil || got != c.want {
			t.Errorf("%s(%q) = %q, %v; want %q", c.algo, c.in, got, err, c.want)
		}
	}
	if _, err := Normalize("sha1"); !errors.Is(err, ErrUnknownAlgorithm) {
		t.Errorf("sha1: %v", err)
	}
}

func writeFile(t *testing.T, path, data string) *os.File {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The sum is kept, reused while the file is unchanged, and recomputed once
// its size or mtime changes.
func TestKeeperKeepsAndInvalidates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	var k Keeper
	f := writeFile(t, path, "Wikipedia")
	sum, err := k.Sum(context.Background(), f, "adler32")
	if err != nil || sum != "11e60398" {
		t.Fatalf("first sum %q, %v", sum, err)
	}
	buf := make([]byte, 128)
	if n, err := unix.Fgetxattr(int(f.Fd()), xattrPrefix+"adler32", buf); err == nil {
		if !strings.HasPrefix(string(buf[:n]), "11e60398 9:") {
			t.Fatalf("kept value %q", buf[:n])
		}
		// Plant a different value with the same version: it must be used,
		// proving the sum is not recomputed.
		version := strings.SplitN(string(buf[:n]), " ", 2)[1]
		if err := unix.Fsetxattr(int(f.Fd()), xattrPrefix+"adler32", []byte("deadbeef "+version), 0); err != nil {
			t.Fatal(err)
		}
		if got, _ := k.Sum(context.Background(), f, "adler32"); got != "deadbeef" {
			t.Fatalf("kept value not reused: %q", got)
		}
	} else {
		t.Logf("no user xattrs here (%v): in-memory fallback", err)
	}

	// Same size, new content and mtime: the kept value is stale.
	if err := os.WriteFile(path, []byte("wikipedia"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	sum, err = k.Sum(context.Background(), f, "adler32")
	want, _ := Compute(strings.NewReader("wikipedia"), "adler32")
	if err != nil || sum != want {
		t.Fatalf("after change: %q, %v; want %q", sum, err, want)
	}
}

func TestKeeperStopsOnCancel(t *testing.T) {
	f := writeFile(t, filepath.Join(t.TempDir(), "f"), strings.Repeat("x", 1<<20))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var k Keeper
	if _, err := k.Sum(ctx, f, "crc32c"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
