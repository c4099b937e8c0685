package origin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"sitebox/internal/store"
)

func newAttrOrigin(t *testing.T, readOnly bool) (*Origin, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(filepath.Join(dir, "f"), "user.probe", []byte("x"), 0); errors.Is(err, unix.ENOTSUP) {
		t.Skip("the test directory's file system keeps no user attributes")
	}
	o, err := New(Config{Exports: []Export{{Prefix: "/", Pools: []string{dir}, ReadOnly: readOnly}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o, dir
}

func TestAttrs(t *testing.T) {
	o, dir := newAttrOrigin(t, false)
	ctx := context.Background()
	set := func(q store.AttrQuery) []store.Attr {
		t.Helper()
		q.Op = store.AttrSet
		out, err := o.Attrs(ctx, "/f", q)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := set(store.AttrQuery{Attrs: []store.Attr{{Name: "a", Value: []byte("1")}, {Name: "b", Value: nil}}}); out[0].Err != nil || out[1].Err != nil {
		t.Fatalf("set: %+v", out)
	}
	buf := make([]byte, 16)
	if n, err := unix.Getxattr(filepath.Join(dir, "f"), "user.U.a", buf); err != nil || string(buf[:n]) != "1" {
		t.Fatalf("on disk user.U.a: %q %v", buf[:n], err)
	}
	// Exclusive set of an existing attribute fails for that one only.
	out := set(store.AttrQuery{Exclusive: true, Attrs: []store.Attr{{Name: "a", Value: []byte("2")}, {Name: "c", Value: []byte("3")}}})
	if !errors.Is(out[0].Err, store.ErrExist) || out[1].Err != nil {
		t.Fatalf("exclusive set: %+v", out)
	}
	got, err := o.Attrs(ctx, "/f", store.AttrQuery{Op: store.AttrGet, Attrs: []store.Attr{{Name: "a"}, {Name: "nope"}}})
	if err != nil || string(got[0].Value) != "1" || !errors.Is(got[1].Err, store.ErrNoAttr) {
		t.Fatalf("get: %+v %v", got, err)
	}
	// The list holds the client namespace only (not user.probe).
	list, err := o.Attrs(ctx, "/f", store.AttrQuery{Op: store.AttrList})
	if err != nil || len(list) != 3 {
		t.Fatalf("list: %+v %v", list, err)
	}
	del, err := o.Attrs(ctx, "/f", store.AttrQuery{Op: store.AttrDel, Attrs: []store.Attr{{Name: "a"}, {Name: "a"}}})
	if err != nil || del[0].Err != nil || !errors.Is(del[1].Err, store.ErrNoAttr) {
		t.Fatalf("del: %+v %v", del, err)
	}
	if _, err := o.Attrs(ctx, "/missing", store.AttrQuery{Op: store.AttrList}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("list of a missing file: %v", err)
	}
	if _, err := o.Attrs(ctx, "/f", store.AttrQuery{Op: store.AttrGet}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("get of nothing: %v", err)
	}
}

func TestAttrsPerFileLimit(t *testing.T) {
	o, _ := newAttrOrigin(t, false)
	ctx := context.Background()
	for i := range store.MaxAttrsPerFile {
		out, err := o.Attrs(ctx, "/f", store.AttrQuery{Op: store.AttrSet, Attrs: []store.Attr{{Name: "k" + strconv.Itoa(i)}}})
		if err != nil || out[0].Err != nil {
			t.Fatalf("attribute %d: %v %+v", i, err, out)
		}
	}
	out, _ := o.Attrs(ctx, "/f", store.AttrQuery{Op: store.AttrSet, Attrs: []store.Attr{{Name: "one-more"}, {Name: "k0", Value: []byte("v")}}})
	if !errors.Is(out[0].Err, store.ErrNoSpace) || out[1].Err != nil {
		t.Fatalf("past the limit: %+v (a new one refused, an existing one may change)", out)
	}
}

func TestAttrsReadOnlyExport(t *testing.T) {
	o, _ := newAttrOrigin(t, true)
	ctx := context.Background()
	if _, err := o.Attrs(ctx, "/f", store.AttrQuery{Op: store.AttrSet, Attrs: []store.Attr{{Name: "a"}}}); !errors.Is(err, store.ErrReadOnly) {
		t.Fatalf("set on a read-only export: %v", err)
	}
	if _, err := o.Attrs(ctx, "/f", store.AttrQuery{Op: store.AttrList}); err != nil {
		t.Fatalf("list on a read-only export: %v", err)
	}
}

func TestOneWriterAcrossOwners(t *testing.T) {
	o, _ := newAttrOrigin(t, false)
	unlock, err := store.LockWriter(o, "/f", "session A")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.LockWriter(o, "/f", "PUT B"); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second writer: %v", err)
	}
	unlock()
	if _, err := store.LockWriter(o, "/f", "PUT B"); err != nil {
		t.Fatal(err)
	}
}
