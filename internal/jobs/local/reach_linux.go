package local

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// A job runs on the box's own machine, as an account of its own: what the
// files the box keeps there let that account read, every job can read,
// whatever its token allows. Reach answers, for one account and one path,
// what the kernel would: POSIX permission bits only (owner, group,
// others); access control lists are not looked at.

// Account is who a job's processes are, as the kernel checks their file
// access: a uid, its primary group and its supplementary groups.
type Account struct {
	Name   string
	UID    uint32
	GID    uint32
	Groups []uint32 // supplementary; none for local jobs
}

// inGroup reports whether gid is one of the account's groups.
func (a Account) inGroup(gid uint32) bool {
	return gid == a.GID || slices.Contains(a.Groups, gid)
}

// JobAccounts are the accounts jobs run as: each slot user with its
// primary group only (local jobs run with no supplementary groups), and
// each run_as account (Slurm's) with every group it is in, which the
// batch system gives its jobs. Names that are no account are left out:
// the job router refuses them itself.
func JobAccounts(slotUsers, runAs []string) []Account {
	var out []Account
	for _, name := range slotUsers {
		if a, err := lookupAccount(name, false); err == nil {
			out = append(out, a)
		}
	}
	for _, name := range runAs {
		if a, err := lookupAccount(name, true); err == nil {
			out = append(out, a)
		}
	}
	return out
}

func lookupAccount(name string, withGroups bool) (Account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return Account{}, fmt.Errorf("account %q: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return Account{}, fmt.Errorf("account %q: uid %q gid %q are not numbers", name, u.Uid, u.Gid)
	}
	a := Account{Name: name, UID: uint32(uid), GID: uint32(gid)}
	if !withGroups {
		return a, nil
	}
	ids, err := u.GroupIds()
	if err != nil {
		return Account{}, fmt.Errorf("account %q: groups: %w", name, err)
	}
	for _, s := range ids {
		if g, err := strconv.ParseUint(s, 10, 32); err == nil && uint32(g) != a.GID {
			a.Groups = append(a.Groups, uint32(g))
		}
	}
	return a, nil
}

// Access is how an account reaches a path.
type Access struct {
	// Path is the path asked about with its symbolic links resolved:
	// the one whose permissions decide.
	Path string
	// By names the permission bits of Path that let the account in:
	// "owner", "group" or "others"; "" when it cannot reach Path.
	By string
	// Mode is Path's permission bits.
	Mode fs.FileMode
}

// Reachable reports whether the account can read what is at Path.
func (ac Access) Reachable() bool { return ac.By != "" }

// Fix is the command that takes the account's way in away.
func (ac Access) Fix(a Account) string {
	switch ac.By {
	case "others":
		return "chmod o-rwx " + ac.Path
	case "group":
		return fmt.Sprintf("chmod g-rwx %s, or give it a group %s is not in (chgrp)", ac.Path, a.Name)
	case "owner":
		return fmt.Sprintf("give %s to the box's user (chown)", ac.Path)
	}
	return ""
}

// Reach tells whether account a could read the file at path, or list or
// enter the directory at path (entering is enough to open a file whose
// name is known): every directory on the way, symbolic links resolved,
// must let it search, and then the path itself let it read (a file) or
// read or search (a directory). As the kernel does, the owner's bits
// decide for the owner, the group's for a member of the path's group,
// the others' for everyone else.
func Reach(path string, a Account) (Access, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Access{}, fmt.Errorf("reach %s: %w", path, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Access{}, fmt.Errorf("reach %s: %w", path, err)
	}
	ac := Access{Path: real}
	for _, dir := range ancestors(real) {
		fi, err := os.Stat(dir)
		if err != nil {
			return Access{}, fmt.Errorf("reach %s: %w", path, err)
		}
		if permits(fi, a, 0o1) == "" {
			return ac, nil
		}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return Access{}, fmt.Errorf("reach %s: %w", path, err)
	}
	want := fs.FileMode(0o4)
	if fi.IsDir() {
		want = 0o5
	}
	ac.Mode = fi.Mode().Perm()
	ac.By = permits(fi, a, want)
	return ac, nil
}

// ancestors are the directories above p (an absolute, clean path), from
// the root down.
func ancestors(p string) []string {
	var out []string
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		out = append(out, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// permits says which class of fi's permission bits applies to a
// ("owner", "group" or "others") if those bits grant any of want (bits
// of rwx, e.g. 0o5 for read or search), else "".
func permits(fi fs.FileInfo, a Account, want fs.FileMode) string {
	perm := fi.Mode().Perm()
	class, bits := "others", perm&0o7
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		switch {
		case st.Uid == a.UID:
			class, bits = "owner", perm>>6&0o7
		case a.inGroup(st.Gid):
			class, bits = "group", perm>>3&0o7
		}
	}
	if bits&want == 0 {
		return ""
	}
	return class
}
