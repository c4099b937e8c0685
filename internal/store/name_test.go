package store

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestParseName(t *testing.T) {
	for _, c := range []struct {
		in, path, spelled string
		dir, dot          bool
	}{
		{"/store/f", "/store/f", "/store/f", false, false},
		{"/store/d/", "/store/d", "/store/d/", true, false},
		{"/store/d//", "/store/d", "/store/d/", true, false},
		{"/store/d/.", "/store/d", "/store/d/.", true, true},
		{"/store/d/./", "/store/d", "/store/d/", true, false},
		{"/store/./d", "/store/d", "/store/d", false, false},
		{"store/d/", "/store/d", "/store/d/", true, false},
		{"/", "/", "/", false, false},
		{"/.", "/", "/", false, false},
		{"//", "/", "/", false, false},
	} {
		n, err := ParseName(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if n.Path != c.path || n.Dir != c.dir || n.Dot != c.dot || n.String() != c.spelled {
			t.Errorf("%q: got %+v spelled %q; want path %q dir %v dot %v spelled %q", c.in, n, n.String(), c.path, c.dir, c.dot, c.spelled)
		}
	}
}

func TestCleanPathRefusesLongNames(t *testing.T) {
	for _, c := range []struct {
		name string
		p    string
		ok   bool
	}{
		{"255-byte name", "/store/" + strings.Repeat("x", MaxNameLen), true},
		{"256-byte name", "/store/" + strings.Repeat("x", MaxNameLen+1), false},
		{"path of MaxPathLen", "/" + strings.Repeat(strings.Repeat("y", 200)+"/", 20) + strings.Repeat("z", MaxPathLen-1-20*201), true},
		{"path over MaxPathLen", "/" + strings.Repeat(strings.Repeat("y", 200)+"/", 20) + strings.Repeat("z", MaxPathLen-20*201), false},
	} {
		_, err := CleanPath(c.p)
		if c.ok && err != nil || !c.ok && (!errors.Is(err, ErrNameTooLong) || !errors.Is(err, ErrInvalid)) {
			t.Errorf("%s (%d bytes): %v", c.name, len(c.p), err)
		}
	}
}

// tree is a namespace of a file /f and a directory /d for Check, which
// records what it was asked.
type tree struct{ asked []string }

func (t *tree) Stat(ctx context.Context, name string) (FileInfo, error) {
	t.asked = append(t.asked, name)
	switch name {
	case "/f":
		return FileInfo{Name: "f"}, nil
	case "/d":
		return FileInfo{Name: "d", Mode: fs.ModeDir | 0o755}, nil
	case "/elsewhere":
		return FileInfo{}, &PathError{Op: "stat", Path: name, Err: ErrUnsupported}
	}
	return FileInfo{}, &PathError{Op: "stat", Path: name, Err: ErrNotFound}
}
func (t *tree) Open(ctx context.Context, name string) (File, error)       { return nil, ErrUnsupported }
func (t *tree) List(ctx context.Context, name string) ([]FileInfo, error) { return nil, ErrUnsupported }

func TestNameCheck(t *testing.T) {
	for _, c := range []struct {
		path string
		in   Intent
		want error // nil: passes
	}{
		{"/f", Inspect, nil},
		{"/f/", Inspect, ErrNotDir},
		{"/f/.", Unlink, ErrNotDir},
		{"/f/", CreateFile, ErrNotDir},
		{"/f/", Target, ErrNotDir},
		{"/d/", Inspect, nil},
		{"/d/", Unlink, nil},
		{"/d/.", Inspect, nil},
		{"/d/.", Unlink, ErrInvalid},
		{"/d/", CreateFile, nil}, // the operation answers "is a directory" itself
		{"/nx/", Inspect, ErrNotFound},
		{"/nx/", Unlink, ErrNotFound},
		{"/nx/", CreateFile, ErrIsDir},
		{"/nx/", Target, nil},
		{"/elsewhere/", Unlink, nil}, // a director cannot tell; the server it sends to can
	} {
		n, err := ParseName(c.path)
		if err != nil {
			t.Fatal(err)
		}
		st := &tree{}
		err = n.Check(context.Background(), st, "op", c.in)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s intent %d: %v, want %v", c.path, c.in, err, c.want)
		}
		if !n.Dir && len(st.asked) > 0 {
			t.Errorf("%s: a plain name asked the store %v", c.path, st.asked)
		}
	}
}

func TestCheckMove(t *testing.T) {
	for _, c := range []struct {
		from, to string
		rename   bool
		want     error
	}{
		{"/f", "/g", true, nil},
		{"/f/", "/g", true, ErrNotDir},
		{"/f", "/g/", true, ErrNotDir},
		{"/f", "/g/", false, ErrNotDir},
		{"/f", "/d/", true, ErrNotDir},
		{"/d/", "/g", true, nil},
		{"/d", "/g/", true, nil},
		{"/d/.", "/g", true, ErrInvalid},
		{"/d", "/g/.", true, ErrInvalid},
		{"/d/.", "/g", false, nil},
		{"/nx", "/g/", true, nil}, // the rename reports the missing source
	} {
		from, _ := ParseName(c.from)
		to, _ := ParseName(c.to)
		err := CheckMove(context.Background(), &tree{}, "mv", from, to, c.rename)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s -> %s (rename %v): %v, want %v", c.from, c.to, c.rename, err, c.want)
		}
	}
}
