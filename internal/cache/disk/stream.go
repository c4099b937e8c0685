package disk

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Streams read the cache through the page cache, with the kernel reading
// ahead. A warm stream (xrdcp of a cached file) used to read each block
// with O_DIRECT: no copy, but a disk read per block every time, and the
// reader's thread blocked on each. Through the page cache with
// read-ahead, a file read again is a copy from memory, and the first read
// from disk arrives ahead of the reader in large folios: on a 2-core VM,
// 8 cached files of 64 MiB each read twice with xrdcp, one copy at a
// time, cost 0.41–0.47 s of server CPU per GB with O_DIRECT, and this way
// 0.29 starting from a cold page cache and 0.24–0.29 warm (through a
// reader without read-ahead, as the scattered readers' is, 0.33–0.35:
// its reads fill the page cache in 4 KiB folios).
//
// Read-ahead brings pages into the page cache that nobody checked on this
// trip from disk, which would let a page checked before, dropped since
// and now read ahead pass as checked. So a stream read first forgets the
// checks of the pages after it that the kernel's read-ahead may reach
// (StreamReach); they are checked again when read. Streams get a reader
// of their own (Data.Stream): the scattered readers' reader keeps
// read-ahead off, so their reads bring in only what they check. Where
// the read-ahead window cannot be learnt, streams use that reader too.

// StreamMin is the smallest read served as a stream: a whole block of
// 1 MiB or more, as a streaming reader asks for.
const StreamMin = 1 << 20

// streamReach returns how far past a read the kernel's read-ahead may
// bring pages into the page cache for files in dir, or 0 when it cannot
// tell. The read-ahead window is at most the device's read_ahead_kb, or
// the read itself if larger (at most a block, 1 MiB, for the
// cache's reads); the kernel keeps up to two windows in flight, and
// rounds them to folios of up to 2 MiB.
func streamReach(dir string) int64 {
	ra := readAheadKB(dir)
	if ra <= 0 {
		return 0
	}
	window := max(ra<<10, StreamMin)
	return 2*window + 2<<20
}

// readAheadKB reads the read-ahead setting of the device holding dir:
// the device's queue, its parent disk's for a partition, or the backing
// device info of a filesystem without a block device of its own.
func readAheadKB(dir string) int64 {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return 0
	}
	dev := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	for _, p := range []string{
		filepath.Join("/sys/dev/block", dev, "queue/read_ahead_kb"),
		filepath.Join("/sys/dev/block", dev, "../queue/read_ahead_kb"),
		filepath.Join("/sys/class/bdi", dev, "read_ahead_kb"),
	} {
		if b, err := os.ReadFile(p); err == nil {
			if kb, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
				return kb
			}
		}
	}
	return 0
}

// StreamReach is how far past a stream read the kernel's read-ahead may
// bring pages into the page cache, or 0 when streams read without it.
func (d *Dir) StreamReach() int64 { return d.streamReach }

// SetStreamReach sets StreamReach, as on a device with another
// read-ahead setting.
func (d *Dir) SetStreamReach(n int64) { d.streamReach = n }

// openStream opens the data file of p for streams: buffered, with the
// kernel's read-ahead (see above).
func (d *Dir) openStream(p string) (*os.File, error) {
	return d.root.Open(dataName(p))
}
