package mount

import "testing"

// Paths follow renames of a parent; unlinked and forgotten names lead
// nowhere.
func TestNodesPaths(t *testing.T) {
	n := newNodes(0)
	d, _ := n.lookup(rootIno, "d")
	f, _ := n.lookup(d, "f")
	if p, ok := n.path(f); !ok || p != "/d/f" {
		t.Fatalf("path = %q, %v", p, ok)
	}
	e, _ := n.lookup(rootIno, "e")
	n.rename(rootIno, "d", e, "moved")
	if p, _ := n.path(f); p != "/e/moved/f" {
		t.Errorf("after the parent's rename: %q", p)
	}
	n.unlink(d, "f")
	if _, ok := n.path(f); ok {
		t.Error("an unlinked name still has a path")
	}
	g, _ := n.lookup(e, "g")
	n.forget(g, 1)
	if _, ok := n.path(g); ok {
		t.Error("a forgotten inode still has a path")
	}
	if again, _ := n.lookup(e, "g"); again == g {
		t.Error("a forgotten inode number was given again")
	}
}

// Two lookups need two forgets.
func TestNodesLookupCount(t *testing.T) {
	n := newNodes(0)
	a, _ := n.lookup(rootIno, "a")
	if b, _ := n.lookup(rootIno, "a"); b != a {
		t.Fatalf("a second lookup gave inode %d, want %d", b, a)
	}
	n.forget(a, 1)
	if _, ok := n.path(a); !ok {
		t.Fatal("forgotten after one of two lookups")
	}
	n.forget(a, 1)
	if _, ok := n.path(a); ok {
		t.Error("still known after both lookups were given back")
	}
}

func TestNodesLeavesAndLimit(t *testing.T) {
	n := newNodes(4) // the root and three names
	d, _ := n.lookup(rootIno, "d")
	f1, _ := n.lookup(d, "f1")
	n.lookup(d, "f2")
	select {
	case <-n.over:
		t.Fatal("nudged at the limit, not past it")
	default:
	}
	n.lookup(rootIno, "g")
	select {
	case <-n.over:
	default:
		t.Fatal("a lookup past the limit did not nudge the pruner")
	}
	leaves := n.leaves(10)
	if len(leaves) != 3 {
		t.Fatalf("leaves = %v, want f1, f2 and g (d has names below it, the root is never one)", leaves)
	}
	for _, l := range leaves {
		if l.name == "d" || l.ino == rootIno {
			t.Errorf("%v offered for pruning", l)
		}
		if l.name == "f1" && (l.ino != f1 || l.parent != d) {
			t.Errorf("f1 = %+v, want ino %d in %d", l, f1, d)
		}
	}
	if got := n.leaves(1); len(got) != 1 || got[0].name != "f1" {
		t.Errorf("leaves(1) = %v, want f1 (the least recently looked up)", got)
	}
	n.lookup(d, "f1") // used again: f2 is now the oldest
	if got := n.leaves(1); len(got) != 1 || got[0].name != "f2" {
		t.Errorf("leaves(1) after f1 was looked up again = %v, want f2", got)
	}
	n.forget(f1, 1)
	// The kernel forgets what it was asked to drop: the parent goes with
	// its last child.
	for _, l := range leaves {
		n.forget(l.ino, 1)
	}
	n.forget(d, 1)
	if c := n.count(); c != 1 {
		t.Errorf("%d nodes after every name was forgotten, want the root only", c)
	}
}
