package mount

import (
	"cmp"
	"path"
	"slices"
	"sync"
	"time"
)

// rootIno is the inode FUSE gives the mount's root.
const rootIno = 1

// node is an inode the kernel knows: its name in its parent, so a
// rename moves a whole subtree by changing one node, and how many
// lookups the kernel holds on it (FORGET gives them back).
type node struct {
	ino     uint64
	parent  *node
	name    string
	lookups uint64
	kids    map[string]*node
	gone    bool   // unlinked: its name now names nothing
	used    uint64 // when it was last looked up (nodes.clock)
}

// kept is the size and mtime a file had when its data was last opened:
// while they are unchanged the kernel may keep the pages it holds
// (FOPEN_KEEP_CACHE). Only files opened have one, so the nodes of a
// million names listed stay small.
type kept struct {
	size  int64
	mtime time.Time
}

// nodes is the inode table: inode numbers for the names the kernel has
// looked up, and back.
type nodes struct {
	mu    sync.Mutex
	byIno map[uint64]*node
	next  uint64
	root  *node
	kept  map[uint64]kept // by inode
	clock uint64          // counts lookups, to order nodes by last use
	// max is the count past which a lookup nudges the pruner (over); 0
	// for none.
	max  int
	over chan struct{}
}

func newNodes(max int) *nodes {
	root := &node{ino: rootIno, lookups: 1}
	return &nodes{byIno: map[uint64]*node{rootIno: root}, next: rootIno + 1, root: root, kept: map[uint64]kept{}, max: max, over: make(chan struct{}, 1)}
}

// count is the number of nodes held.
func (t *nodes) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byIno)
}

// leaf is a node the kernel may be asked to forget: by its inode, or by
// its name in its parent.
type leaf struct {
	ino, parent uint64
	name        string
	used        uint64
}

// leaves names the n least recently looked up nodes with no names below
// them. Oldest first, so a directory walked long ago loses all its
// names and then goes itself (a name dropped that is still wanted costs
// one lookup, answered from the listings).
func (t *nodes) leaves(n int) []leaf {
	t.mu.Lock()
	var out []leaf
	for _, nd := range t.byIno {
		if nd == t.root || len(nd.kids) > 0 || nd.gone || nd.parent == nil {
			continue
		}
		out = append(out, leaf{ino: nd.ino, parent: nd.parent.ino, name: nd.name, used: nd.used})
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b leaf) int { return cmp.Compare(a.used, b.used) })
	return out[:min(n, len(out))]
}

// path is the node's path below the mount's root ("/" for the root);
// ok is false for a node the kernel forgot or whose name was unlinked.
func (t *nodes) path(ino uint64) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.byIno[ino]
	if n == nil {
		return "", false
	}
	var parts []string
	for ; n != t.root; n = n.parent {
		if n.gone || n.parent == nil {
			return "", false
		}
		parts = append(parts, n.name)
	}
	p := "/"
	for i := len(parts) - 1; i >= 0; i-- {
		p = path.Join(p, parts[i])
	}
	return p, true
}

// lookup returns the inode for name in parent, making one if needed, and
// counts one more kernel lookup of it (the kernel counts one for every
// entry it is given: LOOKUP, CREATE, MKDIR, READDIRPLUS).
func (t *nodes) lookup(parent uint64, name string) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.byIno[parent]
	if p == nil {
		return 0, false
	}
	n := p.kids[name]
	if n == nil {
		n = &node{ino: t.next, parent: p, name: name}
		t.next++
		if p.kids == nil {
			p.kids = map[string]*node{}
		}
		p.kids[name] = n
		t.byIno[n.ino] = n
		if t.max > 0 && len(t.byIno) > t.max {
			select {
			case t.over <- struct{}{}:
			default:
			}
		}
	}
	n.lookups++
	t.clock++
	n.used = t.clock
	return n.ino, true
}

// forget gives back count lookups of ino; a node nobody holds leaves the
// table (a node's children hold their parent in the kernel, so a node
// with children is not forgotten before them). It reports whether ino
// is still held.
func (t *nodes) forget(ino, count uint64) (held bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer func() { _, held = t.byIno[ino] }()
	n := t.byIno[ino]
	if n == nil || n == t.root {
		return
	}
	n.lookups -= min(count, n.lookups)
	// Climb while nodes are held by nobody: a parent the kernel forgot
	// before its last child leaves with it.
	for n != t.root && n.lookups == 0 && len(n.kids) == 0 {
		delete(t.byIno, n.ino)
		delete(t.kept, n.ino)
		p := n.parent
		if p == nil {
			return
		}
		if p.kids[n.name] == n {
			delete(p.kids, n.name)
		}
		n = p
	}
	return
}

// unlink marks name in parent gone: an open file keeps its inode, but
// the name no longer leads to it.
func (t *nodes) unlink(parent uint64, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.byIno[parent]; p != nil {
		if n := p.kids[name]; n != nil {
			n.gone = true
			delete(p.kids, name)
		}
	}
}

// rename moves the node named oldName in oldParent (and so its
// subtree) to newName in newParent; what newName named is unlinked.
func (t *nodes) rename(oldParent uint64, oldName string, newParent uint64, newName string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	op, np := t.byIno[oldParent], t.byIno[newParent]
	if op == nil || np == nil {
		return
	}
	n := op.kids[oldName]
	if old := np.kids[newName]; old != nil && old != n {
		old.gone = true
		delete(np.kids, newName)
	}
	if n == nil {
		return
	}
	delete(op.kids, oldName)
	n.parent, n.name = np, newName
	if np.kids == nil {
		np.kids = map[string]*node{}
	}
	np.kids[newName] = n
}

// keep records the size and mtime of ino's data as opened now and
// reports whether they are those of the previous open, so the kernel's
// pages of it are still good.
func (t *nodes) keep(ino uint64, size int64, mtime time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byIno[ino] == nil {
		return false
	}
	k, ok := t.kept[ino]
	same := ok && k.size == size && k.mtime.Equal(mtime) && !mtime.IsZero()
	t.kept[ino] = kept{size: size, mtime: mtime}
	return same
}
