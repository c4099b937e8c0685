package origin

import (
	"context"
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"sitebox/internal/store"
)

// TestDiskFull writes past the end of a tiny tmpfs pool: the error must be
// ErrNoSpace (which the frontends turn into kXR_NoSpace / 507), not a crash
// or a generic I/O error.
func TestDiskFull(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
			t.Fatalf("mount tmpfs: %v", err)
		}
		t.Skipf("cannot mount a small tmpfs here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	o, err := New(Config{Exports: []Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	w, err := o.Create(context.Background(), "/store/big", store.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	buf := make([]byte, 32<<10)
	var werr error
	for off := int64(0); off < 1<<20 && werr == nil; off += int64(len(buf)) {
		_, werr = w.WriteAt(buf, off)
	}
	if !errors.Is(werr, store.ErrNoSpace) {
		t.Fatalf("write to a full pool: %v, want ErrNoSpace", werr)
	}
	sp, err := o.Space(context.Background(), "/store")
	if err != nil || sp.Total == 0 || sp.Total > 1<<20 {
		t.Fatalf("Space = %+v, %v", sp, err)
	}
}
