package disk

import (
	"os"

	"sitebox/internal/dio"
)

// Data is one cached file's data file, and the descriptors it is read
// and written with, each opened when first needed:
//
//   - File, the data file itself, written with O_DIRECT where the disk
//     allows it (a stream's blocks, see direct.go) and otherwise read and
//     written through the page cache without read-ahead;
//   - Reader, a buffered descriptor without read-ahead: every read goes
//     through the page cache, whether or not writes bypass it, so a
//     reader picking baskets pays a copy, not a disk read, and brings in
//     only the pages it checks; small writes (a scattered reader's pages)
//     go through it too, so they are in the page cache when read again;
//   - Stream, a buffered descriptor with the kernel's read-ahead, for
//     streams (stream.go);
//   - Map, the file mapped, for lending its pages (mapping.go).
//
// Linux keeps them coherent: an O_DIRECT write invalidates the cached
// pages it covers, and fsync on any descriptor syncs the file.
//
// A Data is not safe for concurrent use: the cache's entry lock guards
// it. The descriptors it returns stay usable without that lock; one
// closed meanwhile fails with os.ErrClosed.
type Data struct {
	dir    *Dir
	path   string
	opened func() // called when the data file is opened
	w      *os.File
	r      *os.File
	s      *os.File
	mm     *Mapping
}

// Data is the data file of the cached file at namespace path p; opened
// is called whenever the data file itself is opened (the owner then has
// a file to sync).
func (d *Dir) Data(p string, opened func()) *Data { return &Data{dir: d, path: p, opened: opened} }

// File returns the data file, opening or creating it. size is the cached
// file's (or -1 if unknown): the data file is made sparse at that size
// from the start, since writing into holes is several times cheaper than
// extending the file block by block (measured on ext4: 4.4 GB/s against
// 0.3 GB/s), rounded up so the last block can be written and read with
// O_DIRECT.
func (f *Data) File(size int64) (*os.File, error) {
	if f.w != nil {
		return f.w, nil
	}
	w, err := f.dir.openData(f.path)
	if err != nil {
		return nil, err
	}
	if fi, err := w.Stat(); err == nil && size >= 0 && fi.Size() != dio.AlignUp(size) {
		if err := w.Truncate(dio.AlignUp(size)); err != nil {
			w.Close()
			return nil, err
		}
	}
	f.w = w
	if f.opened != nil {
		f.opened()
	}
	return w, nil
}

// Opened is the data file if it is open, else nil (nothing written to
// sync).
func (f *Data) Opened() *os.File { return f.w }

// Reader returns the buffered reader without read-ahead, opening it (and
// the data file first, which creates it).
func (f *Data) Reader(size int64) (*os.File, error) { return f.second(&f.r, size, f.dir.openRead) }

// Stream returns the streams' reader, with the kernel's read-ahead,
// opening it (and the data file first).
func (f *Data) Stream(size int64) (*os.File, error) { return f.second(&f.s, size, f.dir.openStream) }

// second returns *slot, a second descriptor of the data file, opening it
// with open (the data file first, which creates it).
func (f *Data) second(slot **os.File, size int64, open func(p string) (*os.File, error)) (*os.File, error) {
	if *slot != nil {
		return *slot, nil
	}
	if _, err := f.File(size); err != nil {
		return nil, err
	}
	d, err := open(f.path)
	if err != nil {
		return nil, err
	}
	*slot = d
	return d, nil
}

// Map returns the mapping of the data file, mapping it through Reader if
// need be, or nil when it cannot be mapped (readers then copy).
func (f *Data) Map(size int64) *Mapping {
	if f.mm == nil {
		if r, err := f.Reader(size); err == nil {
			f.mm = f.dir.mapFile(r)
		}
	}
	return f.mm
}

// Resident reports whether the page cache holds bytes [off, end) of the
// data file right now, asking without reading: with mincore on the
// file's mapping, made if need be. ReadResident alone is not enough: its RWF_NOWAIT read of a page
// that is not there starts reading it from disk, and when the disk
// answers before the kernel looks again the read returns it. A page
// dropped and then read back that way came back unchecked: a corrupt
// byte on disk was served about once in 150 runs of the cache's
// TestCorruptBlockIsRefetched on a virtual disk. A page dropped between
// the question and the read is the window of a few microseconds lending
// has too.
//
// ResidentFD asks the same with cachestat, with no need for the Data
// (and its owner's lock), where the kernel has it.
func (f *Data) Resident(size, off, end int64) bool {
	mp := f.Map(size)
	return mp != nil && end <= mp.Len() && mp.Resident(off, end)
}

// ResidentFD is Resident asked with cachestat on r, without the Data:
// asked is false where the kernel has no cachestat, and the caller then
// asks Data.Resident.
func (d *Dir) ResidentFD(r *os.File, off, end int64) (ok, asked bool) {
	rc, err := r.SyscallConn()
	if err != nil {
		return false, true
	}
	if err := rc.Control(func(fd uintptr) { ok, asked = d.cachedFD(int(fd), off, end) }); err != nil {
		return false, true
	}
	return ok, asked
}

// Close closes every descriptor and drops the Data's reference to the
// mapping (readers that lent from it keep theirs).
func (f *Data) Close() {
	if f.mm != nil {
		f.mm.Unref()
		f.mm = nil
	}
	closeAll(&f.w, &f.r, &f.s)
}

// Idle closes what a file nobody uses need not keep open. A file mapped
// for lending stays mapped, with the reader residency is asked through,
// until Close: analysis jobs open the same files again and again, and
// each new mapping costs a page fault per page lent.
func (f *Data) Idle() {
	if f.mm == nil {
		f.Close()
		return
	}
	closeAll(&f.w, &f.s)
}

func closeAll(files ...**os.File) {
	for _, p := range files {
		if *p != nil {
			(*p).Close()
			*p = nil
		}
	}
}
