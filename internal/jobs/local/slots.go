package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
)

// Jobs never run as the box's own user: a job on the box's cores runs as
// a slot user, an unprivileged account of a pool (as HTCondor's slot
// users), held by one running job at a time. Its sandbox belongs to that
// account while the job runs and to the box again once everything the
// account runs has been killed, so a later job in the same slot finds
// nothing of an earlier one, and no job can signal or read another.

// ErrNoSlots is the configuration error of a box with jobs but no slot
// users.
var ErrNoSlots = errors.New("jobs never run as the box's user: set [jobs] slot_users to unprivileged accounts (e.g. slot_users = [\"sbxslot1\", \"sbxslot2\"]) made with useradd --system")

// Slot is one slot user.
type Slot struct {
	Name     string
	UID, GID uint32
}

// LookupSlots resolves slot user names and checks that each is a real,
// unprivileged account distinct from the box's own user and group (the
// box reaches running sandboxes through its group, so a slot in that
// group could read the others').
func LookupSlots(names []string) ([]Slot, error) {
	if len(names) == 0 {
		return nil, ErrNoSlots
	}
	seen := map[uint32]string{}
	var out []Slot
	for _, n := range names {
		u, err := user.Lookup(n)
		if err != nil {
			return nil, fmt.Errorf("slot user %q: %w (create it with useradd --system --no-create-home --shell /usr/sbin/nologin %s)", n, err, n)
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("slot user %q: uid %q gid %q are not numbers", n, u.Uid, u.Gid)
		}
		switch {
		case uid == 0 || gid == 0:
			return nil, fmt.Errorf("slot user %q is root or in group root: jobs must run unprivileged", n)
		case int(uid) == os.Geteuid():
			return nil, fmt.Errorf("slot user %q is the box's own user: jobs never run as the box's user", n)
		case int(gid) == os.Getegid():
			return nil, fmt.Errorf("slot user %q has the box's group %d as its group: it could read other jobs' sandboxes", n, gid)
		case seen[uint32(uid)] != "":
			return nil, fmt.Errorf("slot users %q and %q are the same account (uid %d): each job needs its own", seen[uint32(uid)], n, uid)
		}
		seen[uint32(uid)] = n
		out = append(out, Slot{Name: n, UID: uint32(uid), GID: uint32(gid)})
	}
	return out, nil
}

// controlDir holds the supervisor's plan and exit report, out of the
// job's reach (a job that could write its exit report could lie about
// its exit code and CPU time).
func controlDir(sandbox string) string {
	return filepath.Join(filepath.Dir(sandbox), ".control")
}

func controlFile(sandbox, suffix string) string {
	return filepath.Join(controlDir(sandbox), filepath.Base(sandbox)+suffix)
}

// PrepareJobDir makes the sandboxes' parent: the box's, searchable but
// not listable by others (a slot user reaches its own sandbox by name and
// cannot see the others), with the control directory the box's alone.
// Every directory above it must be searchable by others too, or no slot
// user could reach its sandbox.
func PrepareJobDir(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("jobs: sandbox dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return fmt.Errorf("jobs: sandbox dir: %w", err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return fmt.Errorf("jobs: sandbox dir: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".control"), 0o700); err != nil {
		return fmt.Errorf("jobs: control dir: %w", err)
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("jobs: sandbox dir: %w", err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("jobs: sandbox dir %s: slot users cannot reach it: %s is mode %#o; make it searchable by others (chmod o+x) or set [jobs] dir elsewhere (not inside the state dir, which is the box's alone)", dir, p, fi.Mode().Perm())
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// ClaimSandbox gives the sandbox (made and staged by the box) to the
// slot user: its files to the slot, the directory to the slot with the
// box's group (0770), so the supervisor, running as the box's user, can
// open the job's stdout and stderr in it and no other slot can enter.
func (sl Slot) ClaimSandbox(dir string) error {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(sl.UID), int(sl.GID))
	})
	if err == nil {
		err = os.Chown(dir, int(sl.UID), os.Getegid())
	}
	if err == nil {
		err = os.Chmod(dir, 0o770)
	}
	if err != nil {
		return fmt.Errorf("give the sandbox to slot user %s: %w", sl.Name, err)
	}
	return nil
}

// ReclaimSandbox gives back to the box what the slot user left in the
// sandbox, once no process of the slot remains. Only entries the slot
// owns change hands, and symbolic links are never followed: a hard link
// to someone else's file stays theirs.
func (sl Slot) ReclaimSandbox(dir string) error {
	uid, gid := os.Geteuid(), os.Getegid()
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // the walk goes on; what cannot be read stays as it is
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if owner(info) != sl.UID && p != dir {
			return nil
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("take back %s from slot user %s: %w", p, sl.Name, err)
		}
		switch {
		case d.IsDir():
			mode := os.FileMode(0o700)
			if p != dir {
				mode = info.Mode().Perm() | 0o700
			}
			return os.Chmod(p, mode)
		case info.Mode().IsRegular() && info.Mode().Perm()&0o600 != 0o600:
			return os.Chmod(p, info.Mode().Perm()|0o600)
		}
		return nil
	})
}
