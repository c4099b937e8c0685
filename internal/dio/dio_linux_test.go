package dio

import (
	"os"
	"testing"
)

// Files of memory and kernel filesystems are not on a local disk, so a
// copy writes them through the page cache.
func TestOnLocalDiskRefusesOthers(t *testing.T) {
	for _, path := range []string{"/proc/self/stat", "/dev/null"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if OnLocalDisk(f.Fd()) {
			t.Errorf("%s counted as on a local disk", path)
		}
		f.Close()
	}
	if _, err := os.Stat("/dev/shm"); err == nil {
		f, err := os.CreateTemp("/dev/shm", "dio-test-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(f.Name())
		defer f.Close()
		if OnLocalDisk(f.Fd()) {
			t.Error("a tmpfs file counted as on a local disk")
		}
	}
}

// Reopen gives a second descriptor of the same file, whose aligned
// writes the first one reads back.
func TestReopenWritesTheSameFile(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "dio-")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := Reopen(f.Fd())
	if err != nil {
		t.Skipf("no O_DIRECT here: %v", err)
	}
	defer d.Close()
	p := Buf(Align)
	for i := range p {
		p[i] = byte(i * 7)
	}
	if _, err := d.WriteAt(p, Align); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, Align)
	if _, err := f.ReadAt(got, Align); err != nil || string(got) != string(p) {
		t.Fatalf("read back through the first descriptor: %v", err)
	}
}
