package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/client"
	"sitebox/internal/xrootd/proto"
)

// fattrBody is a kXR_fattr header body.
func fattrBody(h [4]byte, op store.AttrOp, num int, opts byte) [16]byte {
	var b [16]byte
	copy(b[:4], h[:])
	b[4], b[5], b[6] = byte(op), byte(num), opts
	return b
}

// nvec is a name vector.
func nvec(names ...string) []byte {
	var b []byte
	for _, n := range names {
		b = append(append(append(b, 0, 0), n...), 0)
	}
	return b
}

func vvec(vals ...string) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	return b
}

func skipWithoutXattrs(t *testing.T, dir string) {
	t.Helper()
	if err := unix.Setxattr(dir, "user.probe", []byte("x"), 0); errors.Is(err, unix.ENOTSUP) {
		t.Skip("no user attributes on the test file system")
	}
}

func TestFattrBadInput(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	skipWithoutXattrs(t, dir)
	writeTestFile(t, filepath.Join(dir, "f"), []byte("data"))
	r := login(t, addr)
	var none [4]byte
	path := []byte("/f\x00")
	long := strings.Repeat("n", store.MaxAttrNameLen+1)
	for _, tc := range []struct {
		name string
		body [16]byte
		data []byte
		code int32
	}{
		{"bad subcode", fattrBody(none, 7, 1, 0), append(path, nvec("a")...), proto.ErrArgInvalid},
		{"no arguments", fattrBody(none, store.AttrGet, 1, 0), nil, proto.ErrArgMissing},
		{"numattr 0", fattrBody(none, store.AttrGet, 0, 0), append(path, nvec("a")...), proto.ErrArgInvalid},
		{"numattr 17", fattrBody(none, store.AttrGet, 17, 0), append(path, nvec("a")...), proto.ErrArgInvalid},
		{"list with names", fattrBody(none, store.AttrList, 1, 0), append(path, nvec("a")...), proto.ErrArgInvalid},
		{"fewer names than numattr", fattrBody(none, store.AttrGet, 2, 0), append(path, nvec("a")...), proto.ErrArgMissing},
		{"name without zero prefix", fattrBody(none, store.AttrGet, 1, 0), append(path, "xxa\x00"...), proto.ErrArgInvalid},
		{"empty name", fattrBody(none, store.AttrGet, 1, 0), append(path, 0, 0, 0, 'x'), proto.ErrArgMissing},
		{"long name", fattrBody(none, store.AttrGet, 1, 0), append(path, nvec(long)...), proto.ErrArgTooLong},
		{"trailing bytes", fattrBody(none, store.AttrGet, 1, 0), append(append(path, nvec("a")...), 'z'), proto.ErrBadPayload},
		{"set without value", fattrBody(none, store.AttrSet, 1, 0), append(path, nvec("a")...), proto.ErrArgInvalid},
		{"value too long", fattrBody(none, store.AttrSet, 1, 0), append(append(path, nvec("a")...), 0, 1, 0, 1), proto.ErrArgTooLong},
		{"value cut short", fattrBody(none, store.AttrSet, 1, 0), append(append(path, nvec("a")...), 0, 0, 0, 9, 'v'), proto.ErrArgInvalid},
		{"handle not open", fattrBody([4]byte{9}, store.AttrList, 0, 0), nil, proto.ErrFileNotOpen},
		{"missing file", fattrBody(none, store.AttrList, 0, 0), []byte("/nope\x00"), proto.ErrNotFound},
		{"dot-dot", fattrBody(none, store.AttrList, 0, 0), []byte("/a/../f\x00"), proto.ErrNotAuthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := r.call(proto.ReqFattr, tc.body, tc.data)
			r.wantErr(tc.name, st, body, tc.code)
		})
	}
	// The session is still good.
	if st, _ := r.call(proto.ReqPing, [16]byte{}, nil); st != proto.StatusOK {
		t.Fatal("ping after bad fattr requests")
	}
}

func TestFattrOnHandle(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	skipWithoutXattrs(t, dir)
	writeTestFile(t, filepath.Join(dir, "f"), []byte("data"))
	r := login(t, addr)
	rh := r.open("/f", proto.OpenRead)
	st, body := r.call(proto.ReqFattr, fattrBody(rh, store.AttrSet, 1, 0), append(append([]byte{0}, nvec("a")...), vvec("1")...))
	r.wantErr("set through a read handle", st, body, proto.ErrInvalidRequest)
	// An upload sets the attributes of the file it writes, whatever
	// name it will have (a POSC upload is written under another).
	wh := r.open("/new", proto.OpenNew|proto.OpenPosc)
	st, body = r.call(proto.ReqFattr, fattrBody(wh, store.AttrSet, 2, 0), append(append([]byte{0}, nvec("a", "b")...), vvec("1", "22")...))
	if st != proto.StatusOK || !bytes.Equal(body, append([]byte{0, 2}, nvec("a", "b")...)) {
		t.Fatalf("set on a write handle: %d %q", st, body)
	}
	if st, body := r.call(proto.ReqClose, handleBody(wh), nil); st != proto.StatusOK {
		t.Fatalf("close: %d %q", st, body)
	}
	buf := make([]byte, 8)
	if n, err := unix.Getxattr(filepath.Join(dir, "new"), "user.U.b", buf); err != nil || string(buf[:n]) != "22" {
		t.Fatalf("after the POSC close: user.U.b = %q %v", buf[:n], err)
	}
	// A get answers codes and values in xrootd's layout.
	st, body = r.call(proto.ReqFattr, fattrBody([4]byte{}, store.AttrGet, 2, 0), append([]byte("/new\x00"), nvec("b", "zz")...))
	want := append([]byte{1, 2}, 0, 0, 'b', 0, 0x0b, 0xd3, 'z', 'z', 0) // 3027 kXR_AttrNotFound
	want = append(want, vvec("22", "")...)
	if st != proto.StatusOK || !bytes.Equal(body, want) {
		t.Fatalf("get: %d %q, want %q", st, body, want)
	}
}

// The client's Attrs speaks the same protocol: a cache asks its
// upstream with it.
func TestFattrClientRoundTrip(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	skipWithoutXattrs(t, dir)
	writeTestFile(t, filepath.Join(dir, "f"), []byte("data"))
	fs := client.NewFS(addr)
	defer fs.Close()
	ctx := context.Background()
	out, err := fs.Attrs(ctx, "/f", store.AttrQuery{Op: store.AttrSet, Attrs: []store.Attr{{Name: "k", Value: []byte("v")}}})
	if err != nil || len(out) != 1 || out[0].Err != nil {
		t.Fatalf("set: %+v %v", out, err)
	}
	out, err = fs.Attrs(ctx, "/f", store.AttrQuery{Op: store.AttrSet, Exclusive: true, Attrs: []store.Attr{{Name: "k", Value: []byte("w")}}})
	if err != nil || !errors.Is(out[0].Err, store.ErrExist) {
		t.Fatalf("exclusive set: %+v %v", out, err)
	}
	out, err = fs.Attrs(ctx, "/f", store.AttrQuery{Op: store.AttrGet, Attrs: []store.Attr{{Name: "k"}, {Name: "x"}}})
	if err != nil || string(out[0].Value) != "v" || !errors.Is(out[1].Err, store.ErrNoAttr) {
		t.Fatalf("get: %+v %v", out, err)
	}
	out, err = fs.Attrs(ctx, "/f", store.AttrQuery{Op: store.AttrList})
	if err != nil || len(out) != 1 || out[0].Name != "k" || string(out[0].Value) != "v" {
		t.Fatalf("list: %+v %v", out, err)
	}
	if _, err := fs.Attrs(ctx, "/missing", store.AttrQuery{Op: store.AttrList}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("list of a missing file: %v", err)
	}
}
