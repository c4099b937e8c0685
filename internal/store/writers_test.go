package store

import (
	"errors"
	"testing"
)

func TestWriters(t *testing.T) {
	var w Writers
	a, b := new(byte), new(byte)
	unlockA, err := w.LockWriter("/f", a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.LockWriter("/f", b); !errors.Is(err, ErrLocked) {
		t.Fatalf("second owner: %v, want ErrLocked", err)
	}
	again, err := w.LockWriter("/f", a)
	if err != nil {
		t.Fatalf("the holder again: %v", err)
	}
	if _, err := w.LockWriter("/g", b); err != nil {
		t.Fatalf("another name: %v", err)
	}
	unlockA()
	unlockA() // a second call gives back nothing more
	if _, err := w.LockWriter("/f", b); !errors.Is(err, ErrLocked) {
		t.Fatal("freed while the holder still has one open")
	}
	again()
	unlockB, err := w.LockWriter("/f", b)
	if err != nil {
		t.Fatalf("after the holder let go: %v", err)
	}
	unlockB()
	if len(w.held) != 1 { // "/g" is still held
		t.Fatalf("%d names held, want 1", len(w.held))
	}
}

func TestAttrQueryCheck(t *testing.T) {
	long := string(make([]byte, MaxAttrNameLen+1))
	for _, tc := range []struct {
		name string
		q    AttrQuery
		ok   bool
	}{
		{"list", AttrQuery{Op: AttrList}, true},
		{"list naming attributes", AttrQuery{Op: AttrList, Attrs: []Attr{{Name: "a"}}}, false},
		{"get", AttrQuery{Op: AttrGet, Attrs: []Attr{{Name: "a"}}}, true},
		{"get nothing", AttrQuery{Op: AttrGet}, false},
		{"too many", AttrQuery{Op: AttrDel, Attrs: make([]Attr, MaxAttrsPerRequest+1)}, false},
		{"empty name", AttrQuery{Op: AttrDel, Attrs: []Attr{{}}}, false},
		{"long name", AttrQuery{Op: AttrGet, Attrs: []Attr{{Name: long}}}, false},
		{"big value", AttrQuery{Op: AttrSet, Attrs: []Attr{{Name: "a", Value: make([]byte, MaxAttrValueLen+1)}}}, false},
		{"unknown op", AttrQuery{Op: 9, Attrs: []Attr{{Name: "a"}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.q.Check()
			if (err == nil) != tc.ok {
				t.Fatalf("Check: %v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Check: %v does not wrap ErrInvalid", err)
			}
		})
	}
}
