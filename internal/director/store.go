package director

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"sync"
	"time"

	"sitebox/internal/store"
)

// Stat answers for the namespace root and the directories above the
// servers' prefixes, so clients can walk down to the data; everything else
// is a file the director does not hold: the frontends ask Route first and
// send the client where it is.
func (d *Director) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	if fi, ok := d.statHere(name); ok {
		return fi, nil
	}
	return store.FileInfo{}, noData("stat", name)
}

// Open refuses: a director holds no data (see Route); the directories
// Stat answers for are directories (an https GET lists them).
func (d *Director) Open(ctx context.Context, name string) (store.File, error) {
	if _, here := d.statHere(name); here {
		return nil, &store.PathError{Op: "open", Path: name, Err: store.ErrIsDir}
	}
	return nil, noData("open", name)
}

func noData(op, name string) error {
	return &store.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: a director holds no data; ask where it is (Route)", store.ErrUnsupported)}
}

// statHere answers stat for "/" and the prefix directories.
func (d *Director) statHere(name string) (store.FileInfo, bool) {
	if name == "/" {
		return store.FileInfo{Name: "", Mode: fs.ModeDir | 0o555}, true
	}
	return d.isPrefixDir(name)
}

// Locate lists every server holding name: all replicas, for `xrdfs locate`.
func (d *Director) Locate(ctx context.Context, name string) ([]store.Location, error) {
	_, holders, _ := d.findHolders(name, nil, d.cfg.LocateTimeout+time.Second, nil) // every replica: all answers
	var locs []store.Location
	for _, s := range best(holders, nil) {
		locs = append(locs, store.Location{Endpoint: s.Root})
	}
	if len(locs) == 0 {
		for _, p := range d.cfg.Parents {
			locs = append(locs, store.Location{Endpoint: p.Root, Manager: true})
		}
	}
	if len(locs) == 0 {
		return nil, &store.PathError{Op: "locate", Path: name, Err: fmt.Errorf("%w: no server in this director's federation has it", store.ErrNotFound)}
	}
	return locs, nil
}

// List merges the listings of every server whose prefixes cover name (or
// lie below it), asked in parallel under the locate deadline.
func (d *Director) List(ctx context.Context, name string) ([]store.FileInfo, error) {
	now := time.Now()
	var prefixes []string
	servers := d.reg.list(func(s *Server) bool {
		if s.Role != RoleOrigin || s.Root == "" || !s.usable(now) {
			return false
		}
		prefixes = append(prefixes, s.Prefixes...)
		return s.holds(name)
	})
	merged := map[string]store.FileInfo{}
	for _, c := range store.ChildrenBelow(name, prefixes) {
		merged[c] = store.FileInfo{Name: c, Mode: fs.ModeDir | 0o555}
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.LocateTimeout)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	answered := 0
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fis, err := d.probe.List(ctx, s.Root, name)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			answered++
			for _, fi := range fis {
				if _, dup := merged[fi.Name]; !dup {
					merged[fi.Name] = fi
				}
			}
		}()
	}
	wg.Wait()
	if answered == 0 && len(merged) == 0 {
		return nil, &store.PathError{Op: "list", Path: name, Err: fmt.Errorf("%w: no server in this director's federation lists it", store.ErrNotFound)}
	}
	out := make([]store.FileInfo, 0, len(merged))
	for _, fi := range merged {
		out = append(out, fi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// isPrefixDir answers stat for a directory that is a server prefix or
// above one, so clients can walk down to the data.
func (d *Director) isPrefixDir(name string) (store.FileInfo, bool) {
	now := time.Now()
	if d.reg.exportsBelow(name, func(s *Server) bool { return s.usable(now) }) {
		return store.FileInfo{Name: path.Base(name), Mode: fs.ModeDir | 0o555}, true
	}
	return store.FileInfo{}, false
}
