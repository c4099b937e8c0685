package store

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"time"
)

// Mux serves one namespace from several stores mounted at prefixes (an
// origin's exports, a cache's routes). A path goes to the store with the
// longest matching prefix; the directories above the prefixes are virtual
// and list what is mounted below them.
type Mux struct {
	mounts PrefixTable[Store]
	routes bool // some mounted store is a Router
}

var (
	_ Store         = (*Mux)(nil)
	_ Capable       = (*Mux)(nil)
	_ Creator       = (*Mux)(nil)
	_ Checksummer   = (*Mux)(nil)
	_ Locator       = (*Mux)(nil)
	_ Namespace     = (*Mux)(nil)
	_ SpaceReporter = (*Mux)(nil)
	_ Router        = (*Mux)(nil)
	_ Attributer    = (*Mux)(nil)
	_ WriterLocker  = (*Mux)(nil)
	_ Prechecker    = (*Mux)(nil)
)

// NewMux mounts each store at its (clean) prefix.
func NewMux(stores map[string]Store) *Mux {
	m := &Mux{}
	for p, s := range stores {
		m.mounts.Add(p, s)
		if _, ok := As[Router](s); ok {
			m.routes = true
		}
	}
	return m
}

// As offers the Mux's capabilities, Router only when a store mounted in
// it routes: a namespace of stores that serve everything here (an
// origin's exports beside a cache) is then never asked where a call
// goes, and RouteOf answers "here" without a call. The others are
// offered always; the call answers for a path whose store lacks one.
func (m *Mux) As(target any) bool {
	switch t := target.(type) {
	case *Router:
		if !m.routes {
			return false
		}
		*t = m
	case *Creator:
		*t = m
	case *Checksummer:
		*t = m
	case *Locator:
		*t = m
	case *Namespace:
		*t = m
	case *SpaceReporter:
		*t = m
	case *Attributer:
		*t = m
	case *WriterLocker:
		*t = m
	case *Prechecker:
		*t = m
	default:
		return false
	}
	return true
}

// pick finds the store mounted over the clean path p (nil for a virtual
// directory above the mounts).
func (m *Mux) pick(op, p string) (string, Store, error) {
	if s, ok := m.mounts.Lookup(p); ok {
		return p, s, nil
	}
	if len(m.mounts.Children(p)) > 0 {
		return p, nil, nil // a virtual directory
	}
	return "", nil, &PathError{Op: op, Path: p, Err: ErrNotFound}
}

func virtualDir(name string) FileInfo {
	return FileInfo{Name: path.Base(name), Mode: fs.ModeDir | 0o555, ModTime: time.Unix(0, 0)}
}

func (m *Mux) Stat(ctx context.Context, name string) (FileInfo, error) {
	p, s, err := m.pick("stat", name)
	if err != nil {
		return FileInfo{}, err
	}
	if s == nil {
		return virtualDir(p), nil
	}
	return s.Stat(ctx, p)
}

func (m *Mux) Open(ctx context.Context, name string) (File, error) {
	p, s, err := m.pick("open", name)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, &PathError{Op: "open", Path: p, Err: ErrIsDir}
	}
	return s.Open(ctx, p)
}

// List lists the store's directory, adding the mount points below it that
// the store itself does not show.
func (m *Mux) List(ctx context.Context, name string) ([]FileInfo, error) {
	p, s, err := m.pick("list", name)
	if err != nil {
		return nil, err
	}
	var fis []FileInfo
	if s != nil {
		if fis, err = s.List(ctx, p); err != nil {
			return nil, err
		}
	}
	have := map[string]bool{}
	for _, fi := range fis {
		have[fi.Name] = true
	}
	for _, c := range m.mounts.Children(p) {
		if !have[c] {
			fis = append(fis, virtualDir(path.Join(p, c)))
		}
	}
	sort.Slice(fis, func(i, j int) bool { return fis[i].Name < fis[j].Name })
	return fis, nil
}

func (m *Mux) Create(ctx context.Context, name string, opts CreateOptions) (WritableFile, error) {
	p, s, err := m.pick("create", name)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, &PathError{Op: "create", Path: p, Err: ErrIsDir}
	}
	c, ok := As[Creator](s)
	if !ok {
		return nil, &PathError{Op: "create", Path: p, Err: fmt.Errorf("%w: this path cannot be changed here", ErrReadOnly)}
	}
	return c.Create(ctx, p, opts)
}

func (m *Mux) Checksum(ctx context.Context, name, algo string) (string, error) {
	p, s, err := m.pick("checksum", name)
	if err != nil {
		return "", err
	}
	if s == nil {
		return "", &PathError{Op: "checksum", Path: p, Err: ErrIsDir}
	}
	c, ok := As[Checksummer](s)
	if !ok {
		return "", &PathError{Op: "checksum", Path: p, Err: ErrUnsupported}
	}
	return c.Checksum(ctx, p, algo)
}

func (m *Mux) Locate(ctx context.Context, name string) ([]Location, error) {
	p, s, err := m.pick("locate", name)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return []Location{{}}, nil
	}
	return Locate(ctx, s, p)
}

// namespace returns the store for a change to name, or why not.
func (m *Mux) namespace(op, name string) (string, Namespace, error) {
	p, s, err := m.pick(op, name)
	if err != nil {
		return "", nil, err
	}
	ns, ok := As[Namespace](s)
	if s == nil || !ok {
		return "", nil, &PathError{Op: op, Path: p, Err: fmt.Errorf("%w: this path cannot be changed here", ErrReadOnly)}
	}
	return p, ns, nil
}

func (m *Mux) Mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error {
	p, ns, err := m.namespace("mkdir", name)
	if err != nil {
		return err
	}
	return ns.Mkdir(ctx, p, perm, parents)
}

func (m *Mux) Remove(ctx context.Context, name string) error {
	p, ns, err := m.namespace("rm", name)
	if err != nil {
		return err
	}
	return ns.Remove(ctx, p)
}

func (m *Mux) Rmdir(ctx context.Context, name string) error {
	p, ns, err := m.namespace("rmdir", name)
	if err != nil {
		return err
	}
	return ns.Rmdir(ctx, p)
}

func (m *Mux) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	p, ns, err := m.namespace("chmod", name)
	if err != nil {
		return err
	}
	return ns.Chmod(ctx, p, perm)
}

// Rename works within one store only.
func (m *Mux) Rename(ctx context.Context, from, to string) error {
	pf, nsf, err := m.namespace("mv", from)
	if err != nil {
		return err
	}
	pt, nst, err := m.namespace("mv", to)
	if err != nil {
		return err
	}
	if nsf != nst {
		return &PathError{Op: "mv", Path: pf, Err: fmt.Errorf("%w: %s is served by another store than %s", ErrUnsupported, pt, pf)}
	}
	return nsf.Rename(ctx, pf, pt)
}

// Precheck refuses what the change would meet here (a path no store
// below can change, a move between stores), then asks the store mounted
// over the path.
func (m *Mux) Precheck(ctx context.Context, c Call) error {
	p, s, err := m.pick(c.Op, c.Path)
	if err != nil {
		return err
	}
	if c.Op == "create" {
		if s == nil {
			return &PathError{Op: "create", Path: p, Err: ErrIsDir}
		}
		if _, ok := As[Creator](s); !ok {
			return &PathError{Op: "create", Path: p, Err: fmt.Errorf("%w: this path cannot be changed here", ErrReadOnly)}
		}
		return Precheck(ctx, s, c)
	}
	_, nsf, err := m.namespace(c.Op, c.Path)
	if err != nil {
		return err
	}
	if c.Op == "mv" {
		_, nst, err := m.namespace(c.Op, c.To)
		if err != nil {
			return err
		}
		if nsf != nst {
			return &PathError{Op: "mv", Path: c.Path, Err: fmt.Errorf("%w: %s is served by another store than %s", ErrUnsupported, c.To, c.Path)}
		}
	}
	return Precheck(ctx, s, c)
}

func (m *Mux) Space(ctx context.Context, name string) (Space, error) {
	p, s, err := m.pick("space", name)
	if err != nil {
		return Space{}, err
	}
	sr, ok := As[SpaceReporter](s)
	if s == nil || !ok {
		return Space{}, &PathError{Op: "space", Path: p, Err: ErrUnsupported}
	}
	return sr.Space(ctx, p)
}

// Route passes c to the router mounted over its path, the only store it
// asks; a path of a store that does not route, or of none, is served
// here (the call itself then answers). It is offered (As) only when some
// mounted store routes.
func (m *Mux) Route(ctx context.Context, c Call) (Route, error) {
	_, s, err := m.pick(c.Op, c.Path)
	if err != nil || s == nil {
		return Route{}, nil
	}
	return RouteOf(ctx, s, c)
}

// Attrs passes q to the store mounted over name; the virtual directories
// above the mounts keep no attributes.
func (m *Mux) Attrs(ctx context.Context, name string, q AttrQuery) ([]Attr, error) {
	p, s, err := m.pick(q.Op.String(), name)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, noAttrs(q.Op, p)
	}
	return Attrs(ctx, s, p, q)
}

// LockWriter takes the writer lock of the store mounted over name.
func (m *Mux) LockWriter(name string, owner any) (func(), error) {
	_, s, err := m.pick("open for writing", name)
	if err != nil || s == nil {
		return func() {}, nil // the write itself answers
	}
	return LockWriter(s, name, owner)
}
