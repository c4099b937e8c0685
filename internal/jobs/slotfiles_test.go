package jobs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/jobs/local"
	"sitebox/internal/jobs/local/localtest"
)

// slotFilesSlot is this file's slot user: its tests look for what that
// uid leaves anywhere on the machine, so no other test may use it.
const slotFilesSlot = "sbxslot21"

// A slot user serves one owner's job after another's: what alice's job
// leaves in the machine's shared writable places as the slot user must
// be gone before bob's job runs as the same user, which could otherwise
// read it (or trust it, as files of its own uid).
func TestSlotReuseLeavesNothingBehind(t *testing.T) {
	slots := testSlots(t, slotFilesSlot)
	sl := slots[0]
	e := newSvc(t, func(c *svcConfig) { c.Slots = slots })
	u := uniqueName(t, sl)
	// The slot user's own directory outside the shared places, behind a
	// symbolic link in /tmp: removing the link must not reach into it.
	outside := filepath.Join(localtest.ReachableDir(t), "outside")
	mustMkdirOwned(t, outside, 0o700, sl)
	if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chown(filepath.Join(outside, "keep"), int(sl.UID), int(sl.GID))
	// Someone else's world-writable directory: searched, not removed.
	shared := "/tmp/" + u + ".shared"
	mustMkdirOwned(t, shared, 0o1777, local.Slot{})

	leave := sh(`set -e; u=` + u + `
echo alice-secret > /tmp/$u
echo alice-secret > /var/tmp/$u
echo alice-secret > /dev/shm/$u
echo alice-secret > /tmp/$u.shared/x
mkdir /tmp/$u.ro /tmp/$u.none
echo alice-secret > /tmp/$u.ro/inner
echo alice-secret > /tmp/$u.none/inner
chmod 0500 /tmp/$u.ro
chmod 0000 /tmp/$u.none
ln -s ` + outside + ` /tmp/$u.link
ipcmk -M 4096 && ipcmk -Q && ipcmk -S 1
echo left`)
	a := e.submit("alice", leave)[0]
	if j := e.waitState(a.ID, Completed, 30*time.Second); j.Slot != sl.Name {
		t.Fatalf("alice's job ran on slot %q", j.Slot)
	}
	if out := stdout(t, e, a.ID); !strings.Contains(out, "left") {
		t.Fatalf("alice's job did not leave its files: %q", out)
	}
	peek := sh(`u=` + u + `
for f in /tmp/$u /var/tmp/$u /dev/shm/$u /tmp/$u.shared/x /tmp/$u.ro /tmp/$u.ro/inner /tmp/$u.none /tmp/$u.link; do
  if [ -e "$f" ] || [ -L "$f" ]; then echo "SAW $f"; cat "$f" 2>/dev/null; fi
done
chmod 0700 /tmp/$u.none 2>/dev/null && cat /tmp/$u.none/inner
for k in shm sem msg; do
  awk -v me=$(id -u) -v k=$k 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "uid") c = i; next } $c == me { print "SAW SysV " k " " $2 }' /proc/sysvipc/$k
done
echo looked`)
	b := e.submit("bob", peek)[0]
	if j := e.waitState(b.ID, Completed, 30*time.Second); j.Slot != sl.Name {
		t.Fatalf("bob's job ran on slot %q", j.Slot)
	}
	out := stdout(t, e, b.ID)
	t.Logf("bob's job, on the slot alice's job had:\n%s", out)
	if !strings.Contains(out, "looked") || strings.Contains(out, "SAW") || strings.Contains(out, "alice-secret") {
		t.Errorf("bob's job found what alice's job left:\n%s", out)
	}
	for _, p := range []string{"/tmp/" + u, "/var/tmp/" + u, "/dev/shm/" + u, shared + "/x", "/tmp/" + u + ".ro", "/tmp/" + u + ".none", "/tmp/" + u + ".link"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s survived the slot's cleanup", p)
		}
	}
	if left := sysvOf(t, sl.UID); len(left) > 0 {
		t.Errorf("SysV IPC objects of %s survived the slot's cleanup: %v", sl.Name, left)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("the cleanup followed a symbolic link out of /tmp: %v", err)
	}
	if _, err := os.Stat(shared); err != nil {
		t.Errorf("the cleanup removed someone else's directory: %v", err)
	}
}

// A slot whose cleanup failed goes to no job until a later cleanup
// succeeds: here alice's job leaves a file in someone else's directory
// that is made read-only before her job ends, so the slot user cannot
// remove it. Bob's job waits, saying why, and runs once the directory
// is writable again and the retried cleanup has removed the file.
func TestSlotHeldBackUntilCleanedUp(t *testing.T) {
	slots := testSlots(t, slotFilesSlot)
	sl := slots[0]
	e := newSvc(t, func(c *svcConfig) { c.Slots = slots; c.ReleaseRetry = 100 * time.Millisecond })
	u := uniqueName(t, sl)
	dir := "/tmp/" + u + ".closing"
	mustMkdirOwned(t, dir, 0o1777, local.Slot{})
	a := e.submit("alice", sh(`echo alice-secret > `+dir+`/x; echo written; while [ -w `+dir+` ]; do sleep 0.05; done`))[0]
	e.waitOutput(a.ID, "written", 30*time.Second)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.waitState(a.ID, Completed, 30*time.Second)

	b := e.submit("bob", sh(`cat `+dir+`/x 2>/dev/null || echo nothing`))[0]
	time.Sleep(time.Second) // cleanups are retried every 100 ms meanwhile
	j, _ := e.s.Get(b.ID)
	t.Logf("bob's job while the slot's cleanup fails: %s, %q", j.State, j.Reason)
	if j.State != Idle || !strings.Contains(j.Reason, "held back") {
		t.Error("bob's job did not wait for the slot's cleanup")
	}
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	e.waitState(b.ID, Completed, 30*time.Second)
	if out := stdout(t, e, b.ID); out != "nothing\n" {
		t.Errorf("bob's job found what alice's left: %q", out)
	}
	if _, err := os.Lstat(dir + "/x"); err == nil {
		t.Errorf("%s/x survived the retried cleanup", dir)
	}
}

// A job's files are its own: what it writes in /tmp while it runs is
// not readable by the jobs of other owners running beside it as other
// slot users.
func TestJobFilesArePrivate(t *testing.T) {
	slots := testSlots(t, slotFilesSlot)
	e := newSvc(t, func(c *svcConfig) { c.Slots = slots })
	f := "/tmp/" + uniqueName(t, slots[0])
	j := e.submit("alice", sh(`umask; echo alice-secret > `+f+`; stat -c %a `+f))[0]
	e.waitState(j.ID, Completed, 30*time.Second)
	if out := stdout(t, e, j.ID); out != "0077\n600\n" {
		t.Errorf("the job's umask and the mode of its file in /tmp: %q, want 0077 and 600", out)
	}
}

// uniqueName is a name no other run uses, whose leftovers (under /tmp,
// /var/tmp and /dev/shm, and the slot's SysV IPC objects) are removed
// at the end of the test, whatever the code under test did.
func uniqueName(t *testing.T, sl local.Slot) string {
	u := fmt.Sprintf("sbx-left-%d", time.Now().UnixNano())
	t.Cleanup(func() {
		for _, dir := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
			ms, _ := filepath.Glob(filepath.Join(dir, u+"*"))
			for _, m := range ms {
				filepath.WalkDir(m, func(p string, d os.DirEntry, err error) error {
					if err == nil && d.IsDir() {
						os.Chmod(p, 0o700)
					}
					return nil
				})
				os.RemoveAll(m)
			}
		}
		for _, o := range sysvOf(t, sl.UID) {
			exec.Command("ipcrm", "-"+o.flag, o.id).Run()
		}
	})
	return u
}

func mustMkdirOwned(t *testing.T, dir string, mode os.FileMode, sl local.Slot) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, int(sl.UID), int(sl.GID)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}

type sysvObject struct{ flag, id string }

// sysvOf lists the SysV IPC objects uid owns or created.
func sysvOf(t *testing.T, uid uint32) []sysvObject {
	var out []sysvObject
	for _, k := range []struct{ file, flag string }{{"shm", "m"}, {"sem", "s"}, {"msg", "q"}} {
		b, err := os.ReadFile("/proc/sysvipc/" + k.file)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		head := strings.Fields(lines[0])
		for _, l := range lines[1:] {
			f := strings.Fields(l)
			for i, h := range head {
				if (h == "uid" || h == "cuid") && i < len(f) && f[i] == strconv.Itoa(int(uid)) {
					out = append(out, sysvObject{k.flag, f[1]})
					break
				}
			}
		}
	}
	return out
}
