package cksum

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// xattrPrefix names the extended attributes that keep computed sums. The
// value records the file's size and mtime alongside the sum, so any change
// to the file makes the kept value stale without anyone having to delete it.
const xattrPrefix = "user.sitebox.cksum."

// Keeper computes checksums of open files and keeps them in an extended
// attribute of the file. On filesystems without user xattrs it falls back to
// an in-memory table keyed the same way. Requests for the sum of one
// version of a file share one computation, and at most MaxComputing
// computations run at once: a client asking for the md5 of a huge file
// again and again, or of many files at once, reads each once and holds
// no more of the disk than that. Safe for concurrent use; the zero value
// is ready.
type Keeper struct {
	// MaxComputing bounds the computations running at once (default 4,
	// as xrootd's chksum max); more wait their turn.
	MaxComputing int

	mu      sync.Mutex
	mem     map[memKey]string  // fallback when xattrs are unsupported
	flights map[memKey]*flight // computations running or waiting
	turns   chan struct{}      // one token per running computation
	runs    atomic.Int64       // computations started, for tests
}

type memKey struct {
	dev, ino      uint64
	size, mtimeNs int64
	algo          string
}

// Sum returns the checksum of f (opened for reading) with algorithm algo,
// computing it only when no valid kept value exists. Cancelling ctx stops
// waiting; the computation itself stops when no one waits for it any
// more (a client that gave up on a large file).
func (k *Keeper) Sum(ctx context.Context, f *os.File, algo string) (string, error) {
	algo, err := Normalize(algo)
	if err != nil {
		return "", err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return "", fmt.Errorf("checksum: stat: %w", err)
	}
	version := fmt.Sprintf("%d:%d", st.Size, st.Mtim.Nano())
	if v, ok := k.lookup(f, st, algo, version); ok {
		return v, nil
	}
	fl, err := k.join(f, keyOf(st, algo))
	if err != nil {
		return "", err
	}
	return k.wait(ctx, fl)
}

func (k *Keeper) lookup(f *os.File, st unix.Stat_t, algo, version string) (string, bool) {
	buf := make([]byte, 128)
	n, err := unix.Fgetxattr(int(f.Fd()), xattrPrefix+algo, buf)
	if err == nil {
		if v, ver, ok := strings.Cut(string(buf[:n]), " "); ok && ver == version {
			return v, true
		}
		return "", false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.mem[keyOf(st, algo)]
	return v, ok
}

func (k *Keeper) keep(f *os.File, st unix.Stat_t, algo, version, sum string) {
	err := unix.Fsetxattr(int(f.Fd()), xattrPrefix+algo, []byte(sum+" "+version), 0)
	if err == nil {
		return
	}
	// EROFS (read-only export on a read-only mount), ENOTSUP, EPERM: keep in
	// memory instead; the value is still tied to size and mtime.
	if !errors.Is(err, unix.ENOTSUP) && !errors.Is(err, unix.EROFS) && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EACCES) {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.mem == nil {
		k.mem = make(map[memKey]string)
	}
	if len(k.mem) > 100000 { // bound memory; recomputation is only slower
		clear(k.mem)
	}
	k.mem[keyOf(st, algo)] = sum
}

func keyOf(st unix.Stat_t, algo string) memKey {
	return memKey{dev: st.Dev, ino: st.Ino, size: st.Size, mtimeNs: st.Mtim.Nano(), algo: algo}
}

// sectionAll reads a file from offset 0 with ReadAt, leaving the shared file
// offset alone so concurrent users of the same *os.File are unaffected.
type sectionAll struct {
	ctx context.Context
	f   *os.File
	off int64
}

func (s *sectionAll) Read(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := s.f.ReadAt(p, s.off)
	s.off += int64(n)
	return n, err
}
