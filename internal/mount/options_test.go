package mount

import (
	"slices"
	"testing"
)

// The kernel may keep a sequential reader's whole read-ahead window in
// flight to the mount, for several readers at once: a window of 1 MiB
// requests fits its background requests several times over.
func TestOptionsKeepReadAheadInFlight(t *testing.T) {
	m := &Mount{cfg: Config{FsName: "root://h//d"}}
	o := m.options()
	if o.MaxWrite != ioSize || o.MaxReadAhead != ioSize {
		t.Fatalf("request sizes %d/%d, want %d", o.MaxWrite, o.MaxReadAhead, ioSize)
	}
	window := readAhead / ioSize
	if window < 4 {
		t.Fatalf("read-ahead window of %d requests: the kernel would wait on each", window)
	}
	if !o.DisableSplice {
		t.Error("replies are tried as splices: four system calls each, and a log line per 1 MiB read")
	}
	if o.MaxBackground < 2*window {
		t.Fatalf("max_background %d holds fewer than two windows of %d requests", o.MaxBackground, window)
	}
}

// noexec reaches the kernel's mount flags (go-fuse turns the option into
// MS_NOEXEC for mount(2)); without it there is no such option.
func TestOptionsNoExec(t *testing.T) {
	if o := (&Mount{cfg: Config{NoExec: true}}).options(); !slices.Contains(o.Options, "noexec") {
		t.Errorf("options %v: no noexec", o.Options)
	}
	if o := (&Mount{cfg: Config{}}).options(); slices.Contains(o.Options, "noexec") {
		t.Errorf("options %v: noexec unasked", o.Options)
	}
}
