package local

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Slot users are reused: what a job leaves as its slot user outside its
// sandbox would wait for the next job of that user, usually another
// owner's, which could read it and would trust it as its own uid's.
// Once no process of the uid is left (RunReaper), nothing can add to
// what it owns, and the reaper removes all of it from the machine's
// shared writable places. It does so as the slot user with no
// capabilities, on the thread that dropped them (so without goroutines):
// it can remove only what the slot user itself could, and a job that
// planted symbolic links or swaps directories gains nothing. Links are
// never followed, and every directory is checked to be the one looked at
// before anything is done in it.

// sharedPlaces are the directories every user may write in, where a job
// leaves files outside its sandbox. Each one that exists (and is no
// symbolic link: its target, if shared, has its own row) is searched for
// the slot user's entries, which go whole. The box's sandbox directory
// is never reached from them: it is 0711 (PrepareJobDir), so a slot user
// cannot list it.
func sharedPlaces() []string {
	return []string{
		"/tmp",        // scratch space
		"/var/tmp",    // scratch space kept across reboots
		"/dev/shm",    // POSIX shared memory and semaphores (shm_open, sem_open)
		"/dev/mqueue", // POSIX message queues (mq_open), where mounted
		"/run/lock",   // lock files (/var/lock)
	}
}

// The sweep's bounds. A job that leaves millions of entries, or a tree
// deeper than the reaper can hold open, must not keep the reaper (and
// the box, which waits for it before reusing the slot) busy for long:
// the sweep stops, names what it left, and fails; the slot is held back
// and swept again later, each pass removing more.
const (
	sweepMaxEntries = 1_000_000
	sweepWithin     = 10 * time.Second
	sweepMaxDepth   = 512
	sweepNamesLeft  = 5 // paths named in the error; the rest are counted
)

// sweepSlot removes what uid (with primary group gid) owns in the shared
// places and its SysV IPC objects. The error names what is left.
func sweepSlot(uid, gid uint32) error {
	w := newSweeper(uid, gid, sweepMaxEntries, sweepWithin)
	return errors.Join(w.run(sharedPlaces()), sweepSysV(uid))
}

// sweeper is one sweep of a uid's files: its bounds and what it left.
type sweeper struct {
	uid, gid   uint32
	maxEntries int
	within     time.Duration
	started    time.Time
	entries    int      // looked at so far
	unfinished string   // the directory the bound stopped the sweep in
	left       []string // the first sweepNamesLeft that stay, with why
	nLeft      int
	dev        uint64 // the filesystem of the place being swept
}

func newSweeper(uid, gid uint32, maxEntries int, within time.Duration) *sweeper {
	return &sweeper{uid: uid, gid: gid, maxEntries: maxEntries, within: within, started: time.Now()}
}

// run sweeps places and says what is left, nil when nothing is.
func (w *sweeper) run(places []string) error {
	if w.uid == 0 {
		return errors.New("refusing to sweep the files of uid 0 (everything the machine has)")
	}
	for _, p := range places {
		if w.stopped(p) {
			break
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			if !errors.Is(err, unix.ENOENT) {
				w.leave(p, err)
			}
			continue
		}
		if isDir(&st) {
			w.dev = st.Dev
			w.searchOther(unix.AT_FDCWD, p, p, &st, 0)
		}
	}
	return w.err()
}

// searchOther searches someone else's directory (name in dirfd) for
// entries of the uid. One the uid cannot list holds nothing it could
// reach by listing; but one it may also write in and search is a drop
// box it may have filled blindly, so that is left and named.
func (w *sweeper) searchOther(dirfd int, name, path string, st *unix.Stat_t, depth int) {
	if depth > sweepMaxDepth {
		w.leave(path, fmt.Errorf("deeper than %d levels", sweepMaxDepth))
		return
	}
	f, err := openDirAt(dirfd, name, st)
	switch {
	case errors.Is(err, unix.ENOENT):
		return // removed meanwhile
	case errors.Is(err, unix.EACCES):
		if w.mayWriteIn(st) {
			w.leave(path, errors.New("cannot list a directory it may write in"))
		}
		return
	case err != nil:
		w.leave(path, err)
		return
	}
	defer f.Close()
	fd := int(f.Fd())
	w.eachEntry(f, path, func(child, cpath string, cst *unix.Stat_t) {
		switch {
		case cst.Dev != w.dev:
			// Another filesystem mounted in the place (a FUSE or
			// network mount, someone's bind mount) is not the shared
			// place: what it shows as the uid's may be anyone's data
			// elsewhere. A mount the job made itself died with its
			// processes.
		case cst.Uid == w.uid:
			w.remove(fd, child, cpath, cst, depth)
		case isDir(cst):
			w.searchOther(fd, child, cpath, cst, depth+1)
		}
	})
}

// remove removes an entry of dirfd: a directory with all it holds.
func (w *sweeper) remove(dirfd int, name, path string, st *unix.Stat_t, depth int) {
	flags := 0
	if isDir(st) {
		if !w.empty(dirfd, name, path, st, depth+1) {
			return // what stays inside is named
		}
		flags = unix.AT_REMOVEDIR
	}
	if err := unix.Unlinkat(dirfd, name, flags); err != nil && !errors.Is(err, unix.ENOENT) {
		w.leave(path, err)
	}
}

// empty removes everything in the directory name of dirfd, whoever owns
// it, and says whether it succeeded. The uid's own directory is first
// made readable, writable and searchable again, as a job may have taken
// that from itself (chmod 0500, 0000).
func (w *sweeper) empty(dirfd int, name, path string, st *unix.Stat_t, depth int) bool {
	if depth > sweepMaxDepth {
		w.leave(path, fmt.Errorf("deeper than %d levels", sweepMaxDepth))
		return false
	}
	if st.Uid == w.uid && st.Mode&0o700 != 0o700 {
		if err := chmodDirAt(dirfd, name, st, st.Mode&0o7777|0o700); err != nil {
			w.leave(path, err)
			return false
		}
	}
	f, err := openDirAt(dirfd, name, st)
	if err != nil {
		w.leave(path, err)
		return false
	}
	defer f.Close()
	fd, before := int(f.Fd()), w.nLeft
	w.eachEntry(f, path, func(child, cpath string, cst *unix.Stat_t) {
		if cst.Dev != w.dev {
			w.leave(cpath, errors.New("another filesystem is mounted here"))
			return
		}
		w.remove(fd, child, cpath, cst, depth)
	})
	return w.nLeft == before && w.unfinished == ""
}

// eachEntry calls fn with each entry of the directory f (its status,
// never following a link), reading the names a batch at a time so that
// a huge directory costs no more memory than a small one, until the
// bound stops the sweep. Entries gone meanwhile are skipped.
func (w *sweeper) eachEntry(f *os.File, dir string, fn func(name, path string, st *unix.Stat_t)) {
	fd := int(f.Fd())
	for {
		names, err := f.Readdirnames(256)
		for _, name := range names {
			if w.stopped(dir) {
				return
			}
			w.entries++
			path := filepath.Join(dir, name)
			var st unix.Stat_t
			if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if !errors.Is(err, unix.ENOENT) {
					w.leave(path, err)
				}
				continue
			}
			fn(name, path, &st)
		}
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			w.leave(dir, fmt.Errorf("list: %w", err))
			return
		}
	}
}

// stopped says whether the bound is reached, and records where it was.
func (w *sweeper) stopped(where string) bool {
	if w.unfinished != "" {
		return true
	}
	if w.entries >= w.maxEntries || time.Since(w.started) > w.within {
		w.unfinished = where
		return true
	}
	return false
}

// mayWriteIn says whether the uid may add entries to a directory, by
// its mode (the slot user has no supplementary group).
func (w *sweeper) mayWriteIn(st *unix.Stat_t) bool {
	bits := st.Mode
	switch {
	case st.Uid == w.uid:
		bits >>= 6
	case st.Gid == w.gid:
		bits >>= 3
	}
	return bits&0o3 == 0o3
}

func (w *sweeper) leave(path string, err error) {
	w.nLeft++
	if len(w.left) < sweepNamesLeft {
		w.left = append(w.left, fmt.Sprintf("%s (%v)", path, err))
	}
}

// err names what the sweep left, nil when nothing: it never calls clean
// a place it did not search to the end.
func (w *sweeper) err() error {
	var parts []string
	if w.unfinished != "" {
		parts = append(parts, fmt.Sprintf("the sweep stopped at its bound (%d entries, %v) in %s after %d entries and %v, the rest unsearched",
			w.maxEntries, w.within, w.unfinished, w.entries, time.Since(w.started).Round(time.Millisecond)))
	}
	if w.nLeft > 0 {
		s := fmt.Sprintf("%d cannot be removed or searched: %s", w.nLeft, strings.Join(w.left, ", "))
		if w.nLeft > len(w.left) {
			s += fmt.Sprintf(" and %d more", w.nLeft-len(w.left))
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("files of uid %d remain: %s", w.uid, strings.Join(parts, "; "))
}

// openDirAt opens the directory name of dirfd, never through a link,
// and checks that it is still the one st describes: an entry swapped in
// between is not acted on.
func openDirAt(dirfd int, name string, st *unix.Stat_t) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := sameFile(fd, st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// chmodDirAt changes the mode of the directory name of dirfd, never
// through a link: through a path-only descriptor of what is there,
// checked to be the directory st describes (fchmodat cannot refuse to
// follow a link on older kernels, fchmod takes no path-only descriptor).
func chmodDirAt(dirfd int, name string, st *unix.Stat_t, mode uint32) error {
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := sameFile(fd, st); err != nil {
		return err
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), mode)
}

func sameFile(fd int, want *unix.Stat_t) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Dev != want.Dev || st.Ino != want.Ino || !isDir(&st) {
		return errors.New("replaced while being swept")
	}
	return nil
}

func isDir(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFDIR }
