package mount

import "testing"

// Paths follow renames of a parent; unlinked and forgotten names lead
// nowhere.
func TestNodesPaths(t *testing.T) {
	n := newNodes()
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
	n := newNodes()
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
