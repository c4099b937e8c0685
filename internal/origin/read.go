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
	_, fi, err := ex.find(rel)
	if err != nil {
		return store.FileInfo{}, wrap("stat", name, err)
	}
	return ex.info(fi, path.Base(name)), nil
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
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
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
	p, fi, err := ex.find(rel)
	if err != nil {
		return nil, wrap("open", name, err)
	}
	if fi.IsDir() {
		return nil, wrap("open", name, store.ErrIsDir)
	}
	if !fi.Mode().IsRegular() {
		return nil, wrap("open", name, fmt.Errorf("%w: not a regular file", store.ErrInvalid))
	}
	f, err := p.dirRoot().OpenFile(rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, wrap("open", name, err)
	}
	return &file{f: f, ex: ex, name: name}, nil
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
	for _, p := range ex.pools {
		entries, err := readDir(p.dirRoot(), rel)
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

func (f *file) Close() error { return f.f.Close() }

// Fd implements store.SendFiler.
func (f *file) Fd() uintptr { return f.f.Fd() }
