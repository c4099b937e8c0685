package origin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"syscall"

	"golang.org/x/sys/unix"

	"sitebox/internal/cksum"
	"sitebox/internal/nbio"
	"sitebox/internal/store"
)

// Stat describes name from the first pool that holds it.
func (o *Origin) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	ex, rel, ok := o.resolve(name)
	if !ok {
		if len(o.virtualChildren(name)) > 0 {
			return store.FileInfo{Name: path.Base(name), Mode: fs.ModeDir | 0o555}, nil
		}
		return store.FileInfo{}, wrap("stat", name, fs.ErrNotExist)
	}
	_, fi, err := ex.lookup(ctx, rel)
	if err != nil {
		return store.FileInfo{}, wrap("stat", name, err)
	}
	return ex.info(fi, path.Base(name)), nil
}

// dirNoLinks checks that rel is a directory, reached through no link
// and no link itself.
func (ex *export) dirNoLinks(rel string) error {
	_, fi, err := ex.findNoLinks(rel)
	switch {
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return &linkAt{why: whyThrough}
	case !fi.IsDir():
		return store.ErrNotDir
	}
	return nil
}

// lookup is find, or findNoLinks for a tree walk (store.NoFollow).
func (ex *export) lookup(ctx context.Context, rel string) (*pool, fs.FileInfo, error) {
	if store.FollowsLinks(ctx) {
		return ex.find(rel)
	}
	return ex.findNoLinks(rel)
}

// findNoLinks is find without following links (nolinks.go): the entry
// itself, a link described as one. A link on the way is refused at once,
// whichever pool holds it.
func (ex *export) findNoLinks(rel string) (*pool, fs.FileInfo, error) {
	var firstErr error
	for _, p := range ex.pools {
		fi, err := lstatNoLinks(p.dirRoot(), rel)
		if err == nil {
			return p, fi, nil
		}
		if la := (*linkAt)(nil); errors.As(err, &la) {
			return nil, nil, err
		}
		if firstErr == nil || errors.Is(firstErr, fs.ErrNotExist) {
			firstErr = err
		}
	}
	return nil, nil, firstErr
}

// find returns the first pool holding rel and its stat. Missing entries on
// some pools are normal; any other error is reported unless a later pool
// has the entry.
func (ex *export) find(rel string) (*pool, fs.FileInfo, error) {
	var firstErr error
	for _, p := range ex.pools {
		fi, err := p.dirRoot().Stat(rel)
		if err == nil {
			return p, fi, nil
		}
		if firstErr == nil || errors.Is(firstErr, fs.ErrNotExist) {
			firstErr = err
		}
	}
	return nil, nil, firstErr
}

func (ex *export) info(fi fs.FileInfo, name string) store.FileInfo {
	out := store.FileInfo{
		Name:     name,
		Size:     fi.Size(),
		Mode:     fi.Mode(),
		ModTime:  fi.ModTime(),
		Writable: !ex.readOnly,
	}
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		out.ID = st.Ino ^ uint64(st.Dev)<<48
	case *unix.Stat_t: // lstatInfo
		out.ID = st.Ino ^ uint64(st.Dev)<<48
	}
	if fi.IsDir() {
		out.Size = 4096 // as POSIX reports it; XRootD clients show it too
	}
	return out
}

// Open opens an existing regular file for reading.
func (o *Origin) Open(ctx context.Context, name string) (store.File, error) {
	ex, rel, ok := o.resolve(name)
	if !ok {
		if len(o.virtualChildren(name)) > 0 {
			return nil, wrap("open", name, store.ErrIsDir)
		}
		return nil, wrap("open", name, fs.ErrNotExist)
	}
	p, fi, err := ex.lookup(ctx, rel)
	if err == nil {
		err = openable(fi)
	}
	if err != nil {
		return nil, wrap("open", name, err)
	}
	var f *os.File
	if store.FollowsLinks(ctx) {
		f, err = p.dirRoot().OpenFile(rel, os.O_RDONLY, 0)
	} else {
		f, err = openRegularNoLinks(p.dirRoot(), rel)
	}
	if err != nil {
		return nil, wrap("open", name, err)
	}
	return &file{f: f, ex: ex, name: name}, nil
}

// openable refuses to open what is not a regular file.
func openable(fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return store.ErrIsDir
	case fi.Mode()&fs.ModeSymlink != 0: // described as itself: a tree walk
		return &linkAt{why: whyTree}
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: not a regular file", store.ErrInvalid)
	}
	return nil
}

// openRegularNoLinks opens the regular file rel for reading without
// following links; O_NONBLOCK so that a FIFO swapped in after the stat
// cannot hold the call, and a check of what was opened.
func openRegularNoLinks(root *os.Root, rel string) (*os.File, error) {
	f, err := openFileNoLinks(root, rel, os.O_RDONLY|unix.O_NONBLOCK, 0, whyTree)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = openable(fi)
	}
	if err == nil {
		err = unix.SetNonblock(int(f.Fd()), false)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// List merges the directory's entries across pools; where two pools hold
// the same name the first pool's entry wins.
func (o *Origin) List(ctx context.Context, name string) ([]store.FileInfo, error) {
	ex, rel, ok := o.resolve(name)
	if !ok {
		kids := o.virtualChildren(name)
		if len(kids) == 0 {
			return nil, wrap("list", name, fs.ErrNotExist)
		}
		out := make([]store.FileInfo, 0, len(kids))
		for _, k := range kids {
			fi, err := o.Stat(ctx, path.Join(name, k))
			if err != nil {
				fi = store.FileInfo{Name: k, Mode: fs.ModeDir | 0o555}
			}
			out = append(out, fi)
		}
		return out, nil
	}
	merged := map[string]store.FileInfo{}
	found := false
	var lastErr error
	list := readDir
	if !store.FollowsLinks(ctx) {
		list = readDirNoLinks
	}
	for _, p := range ex.pools {
		entries, err := list(p.dirRoot(), rel)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				lastErr = err
			}
			continue
		}
		found = true
		for _, fi := range entries {
			if _, dup := merged[fi.Name()]; !dup {
				merged[fi.Name()] = ex.info(fi, fi.Name())
			}
		}
	}
	if !found {
		if lastErr == nil {
			lastErr = fs.ErrNotExist
		}
		return nil, wrap("list", name, lastErr)
	}
	out := make([]store.FileInfo, 0, len(merged))
	for _, fi := range merged {
		out = append(out, fi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// readDir lists rel in one pool, stat-ing through symlinks (within the
// pool) so listings show what a read would find. Entries whose stat fails
// (dangling or escaping symlinks) are left out rather than failing the list.
func readDir(root *os.Root, rel string) ([]fs.FileInfo, error) {
	d, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	fi, err := d.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, store.ErrNotDir
	}
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]fs.FileInfo, 0, len(names))
	for _, n := range names {
		fi, err := root.Stat(path.Join(rel, n))
		if err != nil {
			continue
		}
		out = append(out, fi)
	}
	return out, nil
}

// Checksum returns the file's checksum, computed once per version of the
// file and kept in an extended attribute, for the algorithms offered.
func (o *Origin) Checksum(ctx context.Context, name, algo string) (string, error) {
	algo, err := cksum.Normalize(algo)
	if err != nil {
		return "", wrap("checksum", name, fmt.Errorf("%w: %v", store.ErrUnsupported, err))
	}
	if !o.offered.Has(algo) {
		return "", wrap("checksum", name, fmt.Errorf("%w: %v", store.ErrUnsupported, o.offered.Refusal(algo)))
	}
	f, err := o.Open(ctx, name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sum, err := o.sums.Sum(ctx, f.(*file).f, algo)
	if err != nil {
		return "", wrap("checksum", name, err)
	}
	return sum, nil
}

// file is an open pool file. It exposes its descriptor for sendfile(2).
type file struct {
	f    *os.File
	ex   *export
	name string
	mm   fileMap // lend.go
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	// What the page cache holds is copied without the scheduler's
	// bookkeeping for a call that may block (see nbio); the rest, if any,
	// is read the usual way.
	n, err := f.readResident(p, off)
	if n < len(p) && err == nil {
		var m int
		m, err = f.f.ReadAt(p[n:], off+int64(n))
		n += m
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return n, wrap("read", f.name, err)
	}
	return n, err
}

// readResident reads what it can of p at off from the page cache; err is
// nil or io.EOF.
func (f *file) readResident(p []byte, off int64) (n int, err error) {
	if !nbio.Supported || off < 0 || len(p) > nbio.MaxQuick || f.ex.noResident.Load() {
		return 0, nil
	}
	rc, rerr := f.f.SyscallConn()
	if rerr != nil {
		return 0, nil
	}
	rc.Read(func(fd uintptr) bool {
		n, err = nbio.ReadResident(int(fd), p, off)
		return true
	})
	if errors.Is(err, errors.ErrUnsupported) {
		f.ex.noResident.Store(true)
	}
	if err != io.EOF {
		err = nil
	}
	return n, err
}

func (f *file) Stat() (store.FileInfo, error) {
	fi, err := f.f.Stat()
	if err != nil {
		return store.FileInfo{}, wrap("stat", f.name, err)
	}
	return f.ex.info(fi, path.Base(f.name)), nil
}

func (f *file) Close() error {
	f.unmap()
	return f.f.Close()
}

// Fd implements store.SendFiler.
func (f *file) Fd() uintptr { return f.f.Fd() }
