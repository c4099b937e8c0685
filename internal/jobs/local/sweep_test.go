package local_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sitebox/internal/jobs/local"
	"sitebox/internal/jobs/local/localtest"
)

// ghost is a uid no account and no process has: the tests that need no
// permission check sweep its files as root, in directories of their own.
const ghost = 3_999_021

// entry is a file makeTree makes: a name ending in "/" is a directory,
// "name -> target" a symbolic link; owned by owner, with mode unless 0.
type entry struct {
	name  string
	owner uint32
	mode  os.FileMode
}

// makeTree makes entries under root, in their order.
func makeTree(t *testing.T, root string, entries ...entry) {
	t.Helper()
	for _, e := range entries {
		p := filepath.Join(root, strings.TrimSuffix(e.name, "/"))
		var err error
		switch name, target, link := strings.Cut(e.name, " -> "); {
		case link:
			p = filepath.Join(root, name)
			err = os.Symlink(target, p)
		case strings.HasSuffix(e.name, "/"):
			err = os.Mkdir(p, 0o700)
		default:
			err = os.WriteFile(p, []byte("left by a job"), 0o600)
		}
		if err == nil {
			err = os.Lchown(p, int(e.owner), int(e.owner))
		}
		if err == nil && e.mode != 0 {
			err = os.Chmod(p, e.mode)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// The uid's entries go whole, chmod-ed directories and what others put
// in them included; other owners' directories are searched and stay;
// no symbolic link is followed, neither one of the uid's nor one of
// someone else's (into a directory of the uid's outside the places), nor
// a place that is one; a place that does not exist is no failure.
func TestSweepRemovesTheUidsTreesOnly(t *testing.T) {
	root := t.TempDir()
	place, outside := filepath.Join(root, "tmp"), filepath.Join(root, "outside")
	makeTree(t, root,
		entry{"tmp/", 0, 0o1777}, entry{"outside/", ghost, 0}, entry{"outside/keep", ghost, 0},
		entry{"tmp/file", ghost, 0},
		entry{"tmp/ro/", ghost, 0}, entry{"tmp/ro/inner", ghost, 0}, entry{"tmp/ro/sub/", ghost, 0},
		entry{"tmp/ro/sub/inner", ghost, 0}, entry{"tmp/ro/theirs", 0, 0o644},
		entry{"tmp/ro/link -> " + outside, ghost, 0},
		entry{"tmp/none/", ghost, 0}, entry{"tmp/none/inner", ghost, 0},
		entry{"tmp/link -> " + outside, ghost, 0},
		entry{"tmp/theirlink -> " + outside, 0, 0},
		entry{"tmp/shared/", 0, 0o1777}, entry{"tmp/shared/mine", ghost, 0}, entry{"tmp/shared/theirs", 0, 0},
		entry{"tmp/shared/deeper/", 0, 0o755}, entry{"tmp/shared/deeper/mine/", ghost, 0},
		entry{"tmp/shared/deeper/mine/inner", ghost, 0},
		entry{"placelink -> " + outside, 0, 0},
	)
	for _, p := range []string{"tmp/ro/sub", "tmp/ro"} {
		os.Chmod(filepath.Join(root, p), 0o500)
	}
	os.Chmod(filepath.Join(root, "tmp/none"), 0)

	places := []string{place, filepath.Join(root, "placelink"), filepath.Join(root, "absent")}
	if err := local.SweepFiles(ghost, ghost, 1000, time.Minute, places); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"file", "ro", "none", "link", "shared/mine", "shared/deeper/mine"} {
		if exists(filepath.Join(place, gone)) {
			t.Errorf("%s (the uid's) survived", gone)
		}
	}
	for _, kept := range []string{"theirlink", "shared", "shared/theirs", "shared/deeper"} {
		if !exists(filepath.Join(place, kept)) {
			t.Errorf("%s (someone else's) was removed", kept)
		}
	}
	if !exists(filepath.Join(outside, "keep")) {
		t.Error("the sweep followed a symbolic link out of its places")
	}
}

// A sweep that reaches its bound, in entries, time or depth, fails and
// says where it stopped: it never calls clean what it has not searched.
func TestSweepBoundFails(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, entry{"tmp/", 0, 0o1777})
	for i := range 50 {
		makeTree(t, root, entry{"tmp/f" + string(rune('a'+i%26)) + string(rune('a'+i/26)), ghost, 0})
	}
	place := filepath.Join(root, "tmp")
	err := local.SweepFiles(ghost, ghost, 10, time.Minute, []string{place})
	if err == nil || !strings.Contains(err.Error(), "stopped at its bound") || !strings.Contains(err.Error(), place) {
		t.Errorf("a sweep bounded to 10 entries of 50: %v", err)
	}
	if ents, _ := os.ReadDir(place); len(ents) != 40 {
		t.Errorf("%d entries left, want the 40 past the bound", len(ents))
	}
	if err := local.SweepFiles(ghost, ghost, 1000, 0, []string{place}); err == nil {
		t.Error("a sweep out of time said it was done")
	}

	deep := filepath.Join(place, "deep")
	p := deep
	for range local.SweepMaxDepth + 4 {
		makeTree(t, "/", entry{p + "/", ghost, 0})
		p = filepath.Join(p, "d")
	}
	err = local.SweepFiles(ghost, ghost, 100000, time.Minute, []string{place})
	if err == nil || !strings.Contains(err.Error(), "deeper than") {
		t.Errorf("a tree deeper than the sweep goes: %v", err)
	}
}

// As the slot user itself (not root), the sweep removes what that user
// may, its directories that it made read-only or closed to itself
// included, and only that: its file in a directory it may not write
// stays and is named, and so is a directory it may write in but not list.
func TestSweepNamesWhatTheSlotUserCannotRemove(t *testing.T) {
	sl := localtest.Slots(t, "sbxslot21")[0]
	place := filepath.Join(localtest.ReachableDir(t), "tmp")
	makeTree(t, "/", entry{place + "/", 0, 0o1777},
		entry{place + "/mine", sl.UID, 0},
		entry{place + "/locked/", 0, 0o755}, entry{place + "/locked/stuck", sl.UID, 0},
		entry{place + "/drop/", 0, 0o733},
		entry{place + "/ro/", sl.UID, 0}, entry{place + "/ro/inner", sl.UID, 0},
		entry{place + "/none/", sl.UID, 0}, entry{place + "/none/inner", sl.UID, 0},
	)
	os.Chmod(place+"/ro", 0o500)
	os.Chmod(place+"/none", 0)
	var err error
	asSlotUser(t, sl.UID, sl.GID, func() { err = local.SweepFiles(sl.UID, sl.GID, 1000, time.Minute, []string{place}) })
	for _, p := range []string{"mine", "ro", "none"} {
		if exists(filepath.Join(place, p)) {
			t.Errorf("the slot user's own %s survived", p)
		}
	}
	for _, want := range []string{place + "/locked/stuck (permission denied)", place + "/drop (cannot list"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the sweep's error %v does not name %s", err, want)
		}
	}
}

// asSlotUser runs fn on a thread of its own that has become uid and gid
// with no capabilities, as the reaper is: no process of the slot user
// is made (another package's test may be killing all of them).
func asSlotUser(t *testing.T, uid, gid uint32, fn func()) {
	t.Helper()
	done := make(chan error)
	go func() {
		// Never unlocked: the thread ends with the goroutine, and its
		// credentials with it.
		runtime.LockOSThread()
		for _, c := range [][4]uintptr{{unix.SYS_SETGROUPS, 0, 0, 0}, {unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)},
			{unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)}} {
			if _, _, errno := unix.RawSyscall(c[0], c[1], c[2], c[3]); errno != 0 {
				done <- errno
				return
			}
		}
		fn()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatalf("become uid %d: %v", uid, err)
	}
}

// The uid's SysV IPC objects go.
func TestSweepSysV(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a segment to another uid needs root")
	}
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		t.Skipf("no SysV shared memory: %v", err)
	}
	t.Cleanup(func() { unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
	var desc unix.SysvShmDesc
	if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &desc); err != nil {
		t.Fatal(err)
	}
	desc.Perm.Uid = ghost
	if _, err := unix.SysvShmCtl(id, unix.IPC_SET, &desc); err != nil {
		t.Fatal(err)
	}
	if err := local.SweepSysV(ghost); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &desc); err == nil {
		t.Errorf("shared memory segment %d of uid %d survived", id, ghost)
	}
}

// The sweep stays on the filesystem of each place: a filesystem mounted
// inside it (a FUSE or network mount showing files as the uid's) is
// neither searched nor emptied, and one mounted in the uid's own
// directory is named as what stays.
func TestSweepStaysOnOneFilesystem(t *testing.T) {
	if os.Geteuid() != 0 {
		localtest.Slots(t, "sbxslot21") // fails under CI=true, skips otherwise
	}
	root := t.TempDir()
	place := filepath.Join(root, "tmp")
	makeTree(t, root, entry{"tmp/", 0, 0o1777}, entry{"tmp/mnt/", 0, 0o755}, entry{"tmp/mine/", ghost, 0}, entry{"tmp/mine/mnt/", ghost, 0})
	for _, m := range []string{"tmp/mnt", "tmp/mine/mnt"} {
		dir := filepath.Join(root, m)
		if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
			t.Fatalf("mount a tmpfs for the test: %v", err)
		}
		t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
		makeTree(t, dir, entry{"shown-as-theirs", ghost, 0})
	}
	err := local.SweepFiles(ghost, ghost, 1000, time.Minute, []string{place})
	if err == nil || !strings.Contains(err.Error(), "another filesystem is mounted here") {
		t.Errorf("sweep: %v; want the mount in the uid's directory named", err)
	}
	for _, kept := range []string{"tmp/mnt/shown-as-theirs", "tmp/mine/mnt/shown-as-theirs"} {
		if !exists(filepath.Join(root, kept)) {
			t.Errorf("%s, on another filesystem, was removed", kept)
		}
	}
}
