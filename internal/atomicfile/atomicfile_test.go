package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAndLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "sub", "f")
	for _, data := range []string{"one", "two"} {
		if err := Write(name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(name); string(got) != data {
			t.Fatalf("got %q, want %q", got, data)
		}
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(filepath.Dir(name)); len(ents) != 1 {
		t.Errorf("%d entries, want only the file", len(ents))
	}
}

func TestCreateIsExclusive(t *testing.T) {
	name := filepath.Join(t.TempDir(), "key")
	if err := Create(name, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Create(name, []byte("second"), 0o600)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v, want ErrExist", err)
	}
	if got, _ := os.ReadFile(name); string(got) != "first" {
		t.Errorf("got %q, the first content must stay", got)
	}
	if ents, _ := os.ReadDir(filepath.Dir(name)); len(ents) != 1 {
		t.Errorf("%d entries, want only the file", len(ents))
	}
}
