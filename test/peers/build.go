package peers

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// SiteboxBuild is the one build of cmd/sitebox a test binary shares when
// SITEBOX_BIN is not set. The zero value is ready; a package's TestMain
// calls Remove after m.Run.
type SiteboxBuild struct {
	once     sync.Once
	dir, bin string
	out      []byte
	err      error
}

// Binary is SITEBOX_BIN (scripts/test.sh sets it), else the build made on
// the first call.
func (b *SiteboxBuild) Binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("SITEBOX_BIN"); bin != "" {
		return bin
	}
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "sitebox-bench-test-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "sitebox")
		b.out, b.err = exec.Command("go", "build", "-o", b.bin, "sitebox/cmd/sitebox").CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("build sitebox: %v\n%s", b.err, b.out)
	}
	return b.bin
}

// Remove deletes the build, if one was made.
func (b *SiteboxBuild) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}
