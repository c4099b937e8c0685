package server

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/xrootd/proto"
)

// TestOneWriterPerFile: a second client opening a file for writing is
// refused with kXR_FileLocked before it can truncate the first one's
// data; once the first closes, the file is free again.
func TestOneWriterPerFile(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	a, b := login(t, addr), login(t, addr)
	h := a.open("/w", proto.OpenDelete|proto.OpenAsync)
	if st, _ := a.call(proto.ReqWrite, writeReq(h, 0), []byte("first")); st != proto.StatusOK {
		t.Fatal("write failed")
	}
	var ob [16]byte
	binary.BigEndian.PutUint16(ob[2:], proto.OpenDelete)
	st, body := b.call(proto.ReqOpen, ob, []byte("/w"))
	b.wantErr("second writer", st, body, proto.ErrFileLocked)
	if got, _ := os.ReadFile(filepath.Join(dir, "w")); string(got) != "first" {
		t.Errorf("file after the refused writer: %q", got)
	}
	// A reader is not locked out; the same client may reopen its file.
	b.open("/w", proto.OpenRead)
	h2 := a.open("/w", proto.OpenUpdate)
	for _, h := range [][4]byte{h, h2} {
		if st, _ := a.call(proto.ReqClose, handleBody(h), nil); st != proto.StatusOK {
			t.Fatal("close failed")
		}
	}
	b.open("/w", proto.OpenDelete)
}

// TestPathCreation: xrootd creates missing parents for kXR_delete with
// any bit of kXR_mkdir's value (xrdcp always sends kXR_async) and for mv,
// and its rm removes an empty directory.
func TestPathCreation(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	r := login(t, addr)
	r.open("/new/dir/f", proto.OpenDelete|proto.OpenAsync)
	if _, err := os.Stat(filepath.Join(dir, "new/dir/f")); err != nil {
		t.Fatalf("open kXR_delete|kXR_async under a missing parent: %v", err)
	}
	var ob [16]byte
	binary.BigEndian.PutUint16(ob[2:], proto.OpenDelete)
	st, body := r.call(proto.ReqOpen, ob, []byte("/other/f"))
	r.wantErr("kXR_delete alone under a missing parent", st, body, proto.ErrNotFound)

	writeTestFile(t, filepath.Join(dir, "m"), []byte("x"))
	if st, body := r.call(proto.ReqMv, [16]byte{}, []byte("/m /a/b/m")); st != proto.StatusOK {
		c, m := errOf(body)
		t.Fatalf("mv into a missing parent: %d %s", c, m)
	}
	if _, err := os.Stat(filepath.Join(dir, "a/b/m")); err != nil {
		t.Fatal(err)
	}
	st, body = r.call(proto.ReqMv, [16]byte{}, []byte("/gone /c/d"))
	r.wantErr("mv of a missing file", st, body, proto.ErrNotFound)
	if _, err := os.Stat(filepath.Join(dir, "c")); err == nil {
		t.Error("mv of a missing file created the new name's parent")
	}

	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	if st, body := r.call(proto.ReqRm, [16]byte{}, []byte("/empty")); st != proto.StatusOK {
		c, m := errOf(body)
		t.Fatalf("rm of an empty directory: %d %s", c, m)
	}
	st, body = r.call(proto.ReqRm, [16]byte{}, []byte("/a"))
	r.wantErr("rm of a non-empty directory", st, body, proto.ErrFSError)
}

// TestPrepareIDs: a staging prepare (prepare -s) is answered with a new
// request id each time, and a missing file is not an error, as with
// xrootd without a staging backend.
func TestPrepareIDs(t *testing.T) {
	addr, _ := testEnv(t, Config{})
	r := login(t, addr)
	var stage [16]byte
	stage[0] = 8 // kXR_stage
	seen := map[string]bool{}
	for range 2 {
		st, body := r.call(proto.ReqPrepare, stage, []byte("/missing\n"))
		if st != proto.StatusOK || len(body) == 0 || seen[string(body)] {
			t.Fatalf("prepare -s: status %d, id %q (seen %v)", st, body, seen)
		}
		seen[string(body)] = true
	}
	if st, body := r.call(proto.ReqPrepare, [16]byte{}, []byte("/missing")); st != proto.StatusOK || len(body) != 0 {
		t.Errorf("prepare: status %d %q", st, body)
	}
	st, body := r.call(proto.ReqPrepare, [16]byte{}, []byte("/../x"))
	r.wantErr("prepare of a bad path", st, body, proto.ErrNotAuthorized)
}
