package local

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A job's processes may leave its process group (setsid), double-fork
// or re-parent themselves, so the group is no boundary; the slot user
// is. Once a job has ended, `sitebox job-reap` runs as its slot user and
// kills every process of that user: kill(-1) reaches exactly the
// processes the caller may signal, and the kernel makes each pass
// atomic against fork. Slot users are exclusive to one job, so nothing
// else dies with them.

// reapWithin bounds how long the reaper keeps killing.
const reapWithin = 10 * time.Second

// RunReaper is the main of the hidden `sitebox job-reap` command, started
// with a slot user's credentials (reapSlot). It returns 0 once no process
// of its user is left alive and nothing the user owns is left in the
// machine's shared writable places (sweepSlot).
func RunReaper() int {
	// kill(-1) and the sweep act with the calling thread's credentials:
	// this thread must hold no capability (CAP_KILL would reach every
	// process on the machine, CAP_FOWNER or CAP_DAC_OVERRIDE every file),
	// whatever the box's unit grants. Everything below runs on it.
	runtime.LockOSThread()
	if err := dropThreadCaps(true); err != nil {
		fmt.Fprintln(os.Stderr, "sitebox job-reap:", err)
		return 2
	}
	uid := uint32(os.Getuid())
	if uid == 0 || os.Geteuid() == 0 {
		fmt.Fprintln(os.Stderr, "sitebox job-reap: refusing to run as root (it would end every process)")
		return 2
	}
	if err := killAllOf(uid); err != nil {
		fmt.Fprintln(os.Stderr, "sitebox job-reap:", err)
		return 1
	}
	// Nothing of the uid runs any more to add to what it owns.
	if err := sweepSlot(uid, uint32(os.Getgid())); err != nil {
		fmt.Fprintln(os.Stderr, "sitebox job-reap:", err)
		return 1
	}
	return 0
}

// killAllOf kills every process the caller may signal, which are those
// of its uid, until none of uid is left but the caller.
func killAllOf(uid uint32) error {
	me := os.Getpid()
	deadline := time.Now().Add(reapWithin)
	for {
		unix.Kill(-1, unix.SIGKILL)
		left := 0
		eachProcOfUID(uid, me, func(int) { left++ })
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d process(es) of uid %d survive SIGKILL", left, uid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reapSlot kills every process of slot sl, and removes what it left in
// the shared places, by running `sitebox job-reap`
// as that user: the running binary itself, through /proc/self/exe, which
// the slot user may run even where it could not reach the binary's
// directory. A subreaper (the supervisor) also collects the orphans the
// kill leaves as its zombies while it waits; the box, whose other
// children are supervisors waited for elsewhere, waits for the reaper
// alone.
func reapSlot(sl Slot, subreaper bool) error {
	cmd := exec.Command("/proc/self/exe", "job-reap")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: sl.UID, Gid: sl.GID, Groups: []uint32{}},
	}
	var stderr strings.Builder
	if !subreaper {
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("reap slot user %s: %v: %s", sl.Name, err, strings.TrimSpace(stderr.String()))
		}
		return nil
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("reap slot user %s: %w", sl.Name, err)
	}
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reap slot user %s: wait: %w", sl.Name, err)
		}
		if pid == cmd.Process.Pid {
			// Everything the kill reached is a zombie now: collect the
			// ones that are ours, or they would outlive the supervisor.
			for {
				if p, err := unix.Wait4(-1, nil, unix.WNOHANG, nil); p <= 0 || err != nil {
					break
				}
			}
			if ws.ExitStatus() != 0 || ws.Signaled() {
				return fmt.Errorf("reap slot user %s: the reaper ended with %v", sl.Name, ws)
			}
			return nil
		}
	}
}

// dropThreadCaps clears the calling (locked) thread's ambient and
// inheritable capabilities and sets no_new_privs on it, so a program it
// starts gains no capability across execve: ambient capabilities
// survive execve for a non-root user (capabilities(7)), and file
// capabilities or set-user-ID bits are ignored under no_new_privs. With
// all, the permitted and effective ones go too; without, they stay so
// the fork can still switch to the slot user.
func dropThreadCaps(all bool) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	// EINVAL: a kernel without ambient capabilities has none to clear.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	for i := range data {
		data[i].Inheritable = 0
		if all {
			data[i].Effective, data[i].Permitted = 0, 0
		}
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}
