// Package atomicfile writes files so that a reader, or the next start
// after a crash, sees the old content or the new, never a torn one: the
// data goes to a temporary in the same directory, is synced, and then
// takes the final name in one step.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces name with data (mode perm), creating its directory
// (0700) if needed.
func Write(name string, data []byte, perm fs.FileMode) error {
	tmp, err := temp(name, data, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	syncDir(name)
	return nil
}

// Create writes data to name only if name does not exist yet; otherwise
// it fails with an error matching fs.ErrExist and leaves name alone. Two
// processes racing to make the same key file thus agree on one.
func Create(name string, data []byte, perm fs.FileMode) error {
	tmp, err := temp(name, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // after the link, only the temporary name goes
	if err := os.Link(tmp, name); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", name, fs.ErrExist)
		}
		return fmt.Errorf("create %s: %w", name, err)
	}
	syncDir(name)
	return nil
}

// syncDir persists the new name in its directory; a failure only loses
// what a crash right now would lose anyway.
func syncDir(name string) {
	if d, err := os.Open(filepath.Dir(name)); err == nil {
		d.Sync()
		d.Close()
	}
}

// temp writes data to a synced temporary beside name and returns its path.
func temp(name string, data []byte, perm fs.FileMode) (string, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-"+filepath.Base(name)+"-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return f.Name(), nil
}
