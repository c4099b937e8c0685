package sitebench

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The disk benchmark's system calls: O_DIRECT, fdatasync, fadvise, statfs
// and /proc/stat are Linux's.

// alignedBuffer returns n bytes of anonymous memory. mmap hands out whole
// pages, so the buffer meets O_DIRECT's alignment without pointer tricks.
func alignedBuffer(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("mmap %d B buffer: %w", n, err)
	}
	return b, nil
}

func freeBuffer(b []byte) { unix.Munmap(b) }

// openDisk opens name for the benchmark, with O_DIRECT if direct, saying
// plainly when the filesystem refuses direct I/O (tmpfs on older kernels,
// some FUSE and network filesystems).
func openDisk(name string, flag int, direct bool) (*os.File, error) {
	if direct {
		flag |= syscall.O_DIRECT
	}
	f, err := os.OpenFile(name, flag, 0o644)
	if err != nil && direct && errors.Is(err, syscall.EINVAL) {
		return nil, fmt.Errorf("%w (this filesystem does not support O_DIRECT; use --direct off)", err)
	}
	return f, err
}

// writeFile writes size bytes to a new file in len(buf) blocks, then
// fdatasyncs it. Buffered writes need the fdatasync or the page cache
// would flatter them; O_DIRECT writes get it too, as they may still sit
// in the device's write cache, and ZFS before 2.3 accepts O_DIRECT but
// buffers anyway. The data are random, so compression (ZFS lz4) cannot
// shrink them, and every block is stamped with its writer and offset so
// deduplication cannot either.
func writeFile(ctx context.Context, name string, size int64, buf []byte, direct bool, writer int) error {
	f, err := openDisk(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, direct)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := rand.Read(buf); err != nil {
		return err
	}
	bs := int64(len(buf))
	for off := int64(0); off < size; off += bs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(buf) >= 16 {
			binary.LittleEndian.PutUint64(buf[0:], uint64(writer))
			binary.LittleEndian.PutUint64(buf[8:], uint64(off))
		}
		if _, err := f.Write(buf[:min(bs, size-off)]); err != nil {
			return err
		}
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("fdatasync %s: %w", name, err)
	}
	return f.Close()
}

// readFile reads name to the end in len(buf) blocks and checks it held
// size bytes. Without O_DIRECT it first drops the file's pages with
// fadvise(DONTNEED), so the reads come from the disk: the writer's
// fdatasync left them clean, and clean pages are all DONTNEED drops.
func readFile(ctx context.Context, name string, size int64, buf []byte, direct bool) error {
	f, err := openDisk(name, os.O_RDONLY, direct)
	if err != nil {
		return err
	}
	defer f.Close()
	if !direct {
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			return fmt.Errorf("fadvise DONTNEED %s: %w", name, err)
		}
	}
	var got int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := f.Read(buf)
		got += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if got != size {
		return fmt.Errorf("read %s: %d bytes, wrote %d", name, got, size)
	}
	return nil
}

// fsNames are the statfs magic numbers of the filesystems site pools
// and scratch areas are made of.
var fsNames = map[int64]string{
	0xEF53: "ext4", 0x58465342: "xfs", 0x2fc12fc1: "zfs", 0x9123683E: "btrfs",
	0x01021994: "tmpfs", 0x6969: "nfs", 0x794c7630: "overlayfs", 0x00c36400: "ceph",
	0x65735546: "fuse", 0x0BD00BD0: "lustre", 0x47504653: "gpfs", 0x5346414F: "afs",
}

// diskStatfs names dir's filesystem and the bytes free to an
// unprivileged writer there.
func diskStatfs(dir string) (string, int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	name, ok := fsNames[int64(st.Type)]
	if !ok {
		name = fmt.Sprintf("fs 0x%x", st.Type)
	}
	return name, int64(st.Bavail) * int64(st.Bsize), nil
}

// cpuStat is the machine's CPU time so far, in clock ticks.
type cpuStat struct{ busy, total int64 }

// readCPUStat sums /proc/stat's "cpu" line: busy is everything but idle
// and iowait (a core waiting on the disk is idle as far as CPU goes).
func readCPUStat() (cpuStat, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuStat{}, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return cpuStat{}, errors.New("/proc/stat: no cpu line")
	}
	var s cpuStat
	// user nice system idle iowait irq softirq steal (guest is in user).
	for i, v := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return cpuStat{}, fmt.Errorf("/proc/stat: %w", err)
		}
		s.total += n
		if i != 3 && i != 4 {
			s.busy += n
		}
	}
	return s, nil
}

// MachineBusy is the CPU time every core of the machine has spent busy
// so far (readCPUStat), kernel threads included: the write-back of what
// a process wrote counts there, not in the process.
func MachineBusy() (time.Duration, error) {
	s, err := readCPUStat()
	return time.Duration(s.busy) * time.Second / clockTicks, err
}

// clockTicks is /proc/stat's unit per second (USER_HZ), 100 on Linux.
const clockTicks = 100

// busySince is the busy share of all cores between from and s, in %.
func (s cpuStat) busySince(from cpuStat) float64 {
	if d := s.total - from.total; d > 0 {
		return 100 * float64(s.busy-from.busy) / float64(d)
	}
	return 0
}
