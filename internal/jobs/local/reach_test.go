package local_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"sitebox/internal/jobs/local"
	"sitebox/internal/jobs/local/localtest"
)

// Ids no account on the machine has: processes run as them to ask the
// kernel belong to no slot user, so no job's end kills them.
const (
	strangerUID   = 3999901
	strangerGID   = 3999902
	strangerGroup = 3999903 // a supplementary group
)

// kernelReads asks the kernel whether a process of a can read path (a
// directory: read or search it), as Reach claims to know without asking.
func kernelReads(t *testing.T, path string, a local.Account) bool {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `if [ -d "$1" ]; then test -r "$1" || test -x "$1"; else test -r "$1"; fi`, "sh", path)
	groups := a.Groups
	if groups == nil {
		groups = []uint32{}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: a.UID, Gid: a.GID, Groups: groups}}
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("run as uid %d: %v", a.UID, err)
	}
	return err == nil
}

func TestReach(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making files of other owners needs root")
	}
	slot := local.Account{Name: "slot", UID: strangerUID, GID: strangerGID}
	runAs := local.Account{Name: "runas", UID: strangerUID, GID: strangerGID, Groups: []uint32{strangerGroup}}
	// mk makes dir/name (a directory when name ends in "/") with mode,
	// owner uid and group gid, and returns its path.
	mk := func(t *testing.T, dir, name string, mode os.FileMode, uid, gid int) string {
		t.Helper()
		p := filepath.Join(dir, name)
		var err error
		if name[len(name)-1] == '/' {
			err = os.Mkdir(p, 0o700)
		} else {
			err = os.WriteFile(p, []byte("secret"), 0o600)
		}
		if err == nil {
			err = os.Chown(p, uid, gid)
		}
		if err == nil {
			err = os.Chmod(p, mode) // after chown, which may clear bits
		}
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Clean(p)
	}
	for _, c := range []struct {
		name string
		acct local.Account
		// make builds the tree in base (which the account may search)
		// and returns the path to ask about and the path that decides.
		make func(t *testing.T, base string) (ask, decides string)
		by   string
	}{
		{"a pool made with mkdir under umask 022", slot, func(t *testing.T, b string) (string, string) {
			p := mk(t, b, "pool/", 0o755, 0, 0)
			return p, p
		}, "others"},
		{"a pool of mode 0750", slot, func(t *testing.T, b string) (string, string) {
			p := mk(t, b, "pool/", 0o750, 0, 0)
			return p, p
		}, ""},
		{"a pool others may only search", slot, func(t *testing.T, b string) (string, string) {
			p := mk(t, b, "pool/", 0o711, 0, 0)
			return p, p
		}, "others"},
		{"a readable file below a private directory", slot, func(t *testing.T, b string) (string, string) {
			mk(t, b, "private/", 0o700, 0, 0)
			p := mk(t, b, "private/key.pem", 0o644, 0, 0)
			return p, p
		}, ""},
		{"a readable file below a searchable, unreadable directory", slot, func(t *testing.T, b string) (string, string) {
			mk(t, b, "secrets/", 0o711, 0, 0)
			p := mk(t, b, "secrets/token", 0o644, 0, 0)
			return p, p
		}, "others"},
		{"a file of a supplementary group of run_as", runAs, func(t *testing.T, b string) (string, string) {
			p := mk(t, b, "token", 0o640, 0, strangerGroup)
			return p, p
		}, "group"},
		{"a file of that group, for a slot user (no supplementary groups)", slot, func(t *testing.T, b string) (string, string) {
			p := mk(t, b, "token", 0o640, 0, strangerGroup)
			return p, p
		}, ""},
		{"a directory of the primary group", slot, func(t *testing.T, b string) (string, string) {
			p := mk(t, b, "cache/", 0o750, 0, strangerGID)
			return p, p
		}, "group"},
		{"the group's bits deny though the others' allow", slot, func(t *testing.T, b string) (string, string) {
			p := mk(t, b, "keytab", 0o604, 0, strangerGID)
			return p, p
		}, ""},
		{"a file the account owns", slot, func(t *testing.T, b string) (string, string) {
			p := mk(t, b, "mine", 0o400, strangerUID, 0)
			return p, p
		}, "owner"},
		{"the owner's bits deny though the others' allow", slot, func(t *testing.T, b string) (string, string) {
			p := mk(t, b, "mine", 0o044, strangerUID, 0)
			return p, p
		}, ""},
		{"a private link to an open pool", slot, func(t *testing.T, b string) (string, string) {
			pool := mk(t, b, "pool/", 0o755, 0, 0)
			mk(t, b, "etc/", 0o700, 0, 0)
			link := filepath.Join(b, "etc", "pool")
			if err := os.Symlink(pool, link); err != nil {
				t.Fatal(err)
			}
			return link, pool
		}, "others"},
		{"an open link to a private pool", slot, func(t *testing.T, b string) (string, string) {
			mk(t, b, "private/", 0o700, 0, 0)
			pool := mk(t, b, "private/pool/", 0o755, 0, 0)
			link := filepath.Join(b, "pool")
			if err := os.Symlink("private/pool", link); err != nil {
				t.Fatal(err)
			}
			return link, pool
		}, ""},
		{"a link to a directory on the way", slot, func(t *testing.T, b string) (string, string) {
			mk(t, b, "private/", 0o700, 0, 0)
			mk(t, b, "private/data/", 0o755, 0, 0)
			if err := os.Symlink("private/data", filepath.Join(b, "data")); err != nil {
				t.Fatal(err)
			}
			p := mk(t, b, "private/data/f", 0o644, 0, 0)
			return filepath.Join(b, "data", "f"), p
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := localtest.ReachableDir(t)
			ask, decides := c.make(t, base)
			got, err := local.Reach(ask, c.acct)
			if err != nil {
				t.Fatal(err)
			}
			if got.By != c.by || got.Path != decides {
				t.Errorf("Reach(%s) = %q through %s, want %q through %s", ask, got.By, got.Path, c.by, decides)
			}
			// A job needs no link: it goes to the resolved path.
			if kernel := kernelReads(t, decides, c.acct); kernel != got.Reachable() {
				t.Errorf("the kernel says reachable=%v, Reach says %v", kernel, got.Reachable())
			}
		})
	}
}

func TestReachMissing(t *testing.T) {
	if _, err := local.Reach(filepath.Join(t.TempDir(), "nothing"), local.Account{UID: strangerUID}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing path: %v, want not-exist", err)
	}
}

func TestReachFix(t *testing.T) {
	a := local.Account{Name: "sbxslot22"}
	for by, want := range map[string]string{
		"others": "chmod o-rwx /data/pool1",
		"group":  "chmod g-rwx /data/pool1, or give it a group sbxslot22 is not in (chgrp)",
		"owner":  "give /data/pool1 to the box's user (chown)",
	} {
		if got := (local.Access{Path: "/data/pool1", By: by}).Fix(a); got != want {
			t.Errorf("%s: %q, want %q", by, got, want)
		}
	}
}

// Slot users' jobs run with no supplementary groups; unknown names are
// left to the job router to refuse.
func TestJobAccounts(t *testing.T) {
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Skip("no account database")
	}
	as := local.JobAccounts([]string{"root", "no-such-account-here"}, []string{"no-such-account-either"})
	if len(as) != 1 || as[0].Name != "root" || as[0].UID != 0 || len(as[0].Groups) != 0 {
		t.Errorf("accounts: %+v", as)
	}
}
