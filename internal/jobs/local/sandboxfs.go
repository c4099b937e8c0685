package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A job owns its sandbox while it runs and may leave symbolic links in
// it: stdout pointing at the box's issuer key, an output pointing at
// /etc/shadow. The box, which may read anything, never follows a link in
// a sandbox: it opens names there one component at a time with
// O_NOFOLLOW, so a name reaches only what lies inside.

// OpenInSandbox opens name (a relative path checked by spec.SandboxPathProblem)
// below dir without following a symbolic link at any component.
func OpenInSandbox(dir, name string, flag int, perm os.FileMode) (*os.File, error) {
	parts := strings.Split(filepath.Clean(name), "/")
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_PATH, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	for _, p := range parts[:len(parts)-1] {
		next, err := unix.Openat(fd, p, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_PATH, 0)
		unix.Close(fd)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: filepath.Join(dir, name), Err: fmt.Errorf("%s: %w (not a directory of the sandbox)", p, err)}
		}
		fd = next
	}
	f, err := unix.Openat(fd, parts[len(parts)-1], flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	unix.Close(fd)
	if err != nil {
		if err == unix.ELOOP {
			err = fmt.Errorf("%w (a symbolic link: the box does not follow links in a sandbox)", err)
		}
		return nil, &os.PathError{Op: "open", Path: filepath.Join(dir, name), Err: err}
	}
	return os.NewFile(uintptr(f), filepath.Join(dir, name)), nil
}

// CheckSandboxFile says why name below dir is not a regular file reached
// without symbolic links (nil when it is), for what is handed on by path
// once the sandbox is the box's again and nothing can change it.
func CheckSandboxFile(dir, name string) error {
	f, err := OpenInSandbox(dir, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", name)
	}
	return nil
}
