package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// SysV IPC objects (shared memory segments, semaphore sets, message
// queues) outlive the processes that made them, as files do, and a later
// job of the same uid may open them. The kernel lets their owner or
// creator remove them, which is what the reaper is.

// sysvKind is one kind of SysV IPC object: its table in /proc/sysvipc,
// the column of its id there, and how one is removed.
type sysvKind struct {
	table, idColumn string
	remove          func(id int) error
}

func sysvKinds() []sysvKind {
	return []sysvKind{
		{"shm", "shmid", func(id int) error {
			_, err := unix.SysvShmCtl(id, unix.IPC_RMID, nil)
			return err
		}},
		{"sem", "semid", func(id int) error { return sysvCtl(unix.SYS_SEMCTL, id, 0, unix.IPC_RMID) }},
		{"msg", "msqid", func(id int) error { return sysvCtl(unix.SYS_MSGCTL, id, unix.IPC_RMID, 0) }},
	}
}

func sysvCtl(trap uintptr, id int, a, b uintptr) error {
	if _, _, errno := unix.Syscall(trap, uintptr(id), a, b); errno != 0 {
		return errno
	}
	return nil
}

// sweepSysV removes the SysV IPC objects uid owns or created, then looks
// again: a shared memory segment another user's process still has
// attached is only marked for removal, and stays reachable by its id
// until detached, so it is named as left.
func sweepSysV(uid uint32) error {
	var errs []error
	for _, k := range sysvKinds() {
		ids, err := sysvOf(k, uid)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a kernel without SysV IPC
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		why := map[int]error{}
		for _, id := range ids {
			// EINVAL, EIDRM: gone meanwhile.
			if err := k.remove(id); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EIDRM) {
				why[id] = err
			}
		}
		if len(ids) == 0 {
			continue
		}
		left, err := sysvOf(k, uid)
		if err != nil {
			errs = append(errs, err)
		}
		for _, id := range left {
			if why[id] == nil {
				why[id] = errors.New("still attached by another user's process")
			}
			errs = append(errs, fmt.Errorf("SysV %s %d of uid %d remains: %w", k.table, id, uid, why[id]))
		}
	}
	return errors.Join(errs...)
}

// sysvOf lists the ids of the objects of kind k whose owner or creator
// is uid, from /proc/sysvipc (whose columns are found by their names).
func sysvOf(k sysvKind, uid uint32) ([]int, error) {
	b, err := os.ReadFile("/proc/sysvipc/" + k.table)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	idAt, uidAt, cuidAt := -1, -1, -1
	for i, h := range strings.Fields(lines[0]) {
		switch h {
		case k.idColumn:
			idAt = i
		case "uid":
			uidAt = i
		case "cuid":
			cuidAt = i
		}
	}
	if idAt < 0 || uidAt < 0 || cuidAt < 0 {
		return nil, fmt.Errorf("/proc/sysvipc/%s: no %s, uid or cuid column in %q", k.table, k.idColumn, lines[0])
	}
	want := strconv.FormatUint(uint64(uid), 10)
	var ids []int
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) <= max(idAt, uidAt, cuidAt) || (f[uidAt] != want && f[cuidAt] != want) {
			continue
		}
		id, err := strconv.Atoi(f[idAt])
		if err != nil {
			return nil, fmt.Errorf("/proc/sysvipc/%s: id %q: %w", k.table, f[idAt], err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
