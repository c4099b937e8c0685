package mount

import (
	"path"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"sitebox/internal/store"
)

// dirHandle is an open directory: the listing it was opened with, so a
// reader paging through it sees one consistent set of names.
type dirHandle struct {
	rel     string
	view    *View
	names   []string
	entries map[string]store.FileInfo
}

func (d *dirHandle) release() {}

func (m *fsys) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	rel, ok := m.nodes.path(in.NodeId)
	if !ok {
		return fuse.ENOENT
	}
	v, st := m.caller(&in.InHeader)
	if !st.Ok() {
		return st
	}
	d := &dirHandle{rel: rel, view: v}
	if st := m.fill(cancel, d); !st.Ok() {
		return st
	}
	out.Fh = m.addHandle(d)
	return fuse.OK
}

// fill (re)reads the directory's listing: at open, and when the reader
// starts over (rewinddir).
func (m *fsys) fill(cancel <-chan struct{}, d *dirHandle) fuse.Status {
	sp := m.storePath(d.rel)
	l := m.dirs.listing(d.view.Key, sp)
	if l == nil {
		var err error
		if l, err = m.list(reqCtx(cancel), d.view, sp); err != nil {
			return m.errno("readdir", d.rel, d.view, err)
		}
	}
	d.names, d.entries = l.names, l.entries
	return fuse.OK
}

func (m *fsys) ReleaseDir(in *fuse.ReleaseIn) { m.dropHandle(in.Fh) }

func (m *fsys) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return m.readDir(cancel, in, out, false)
}

// ReadDirPlus gives each name with its attributes, so `ls -l` costs the
// one listing and no lookup per name.
func (m *fsys) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return m.readDir(cancel, in, out, true)
}

// readDir lists from offset in.Offset: 0 and 1 are "." and "..", the
// names follow at 2 onward.
func (m *fsys) readDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	d, ok := m.handle(in.Fh).(*dirHandle)
	if !ok {
		return fuse.EBADF
	}
	if in.Offset == 0 {
		if st := m.fill(cancel, d); !st.Ok() {
			return st
		}
	}
	for i := in.Offset; i < uint64(len(d.names))+2; i++ {
		e := fuse.DirEntry{Off: i + 1, Mode: syscall.S_IFDIR}
		var fi store.FileInfo
		switch i {
		case 0:
			e.Name = "."
		case 1:
			e.Name = ".."
		default:
			e.Name = d.names[i-2]
			fi = d.entries[e.Name]
			if !fi.IsDir() {
				e.Mode = syscall.S_IFREG
			}
		}
		if !plus {
			if !out.AddDirEntry(e) {
				break
			}
			continue
		}
		eo := out.AddDirLookupEntry(e)
		if eo == nil {
			break
		}
		if i >= 2 { // "." and ".." with node 0: the kernel links nothing
			m.entryOut(eo, in.NodeId, e.Name, fi)
		}
	}
	return fuse.OK
}

// The extended attributes that give a file's root:// URL: XRootD's
// FUSE mounts (xrootdfs) answer xroot.url, EOS's eos.url.xroot, and
// ROOT's TFile::Open looks for them to open the file over root://
// itself, with vector reads, instead of through the kernel.
var urlAttrs = []string{"user.xrootd.url", "xrootd.url", "eos.url.xroot"}

func (m *fsys) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	val, ok := m.urlOf(h.NodeId)
	if !ok || !isURLAttr(attr) {
		return 0, fuse.ENOATTR
	}
	if len(dest) < len(val) {
		return uint32(len(val)), fuse.ERANGE
	}
	return uint32(copy(dest, val)), fuse.OK
}

func (m *fsys) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	if _, ok := m.urlOf(h.NodeId); !ok {
		return 0, fuse.OK
	}
	list := strings.Join(urlAttrs, "\x00") + "\x00"
	if len(dest) < len(list) {
		return uint32(len(list)), fuse.ERANGE
	}
	return uint32(copy(dest, list)), fuse.OK
}

func isURLAttr(name string) bool {
	for _, a := range urlAttrs {
		if name == a {
			return true
		}
	}
	return false
}

// urlOf is the root:// URL of the inode's file: the server's address,
// then the path after a double slash, as XRootD URLs write it.
func (m *fsys) urlOf(ino uint64) (string, bool) {
	if m.cfg.XRootDURL == "" {
		return "", false
	}
	rel, ok := m.nodes.path(ino)
	if !ok {
		return "", false
	}
	return strings.TrimSuffix(m.cfg.XRootDURL, "/") + "/" + path.Clean(m.storePath(rel)), true
}
