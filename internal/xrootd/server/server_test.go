package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

func TestProtocolResponse(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		flags    byte
		wantLen  int
		wantPgRW bool
	}{
		{"plain", Config{}, 0, 8, true},
		{"secreqs", Config{}, proto.ProtoReqSecReqs, 14, true},
		{"secreqs and bifreqs", Config{}, proto.ProtoReqSecReqs | proto.ProtoReqBifReqs, 14, true},
		{"no pgrw", Config{DisablePgRW: true}, 0, 8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, _ := testEnv(t, tt.cfg)
			r := dialRaw(t, addr)
			r.hello()
			var b [16]byte
			binary.BigEndian.PutUint32(b[0:], proto.ProtocolVersion)
			b[4] = tt.flags
			st, body := r.call(proto.ReqProtocol, b, nil)
			if st != proto.StatusOK || len(body) != tt.wantLen {
				t.Fatalf("status %d body %x, want %d bytes", st, body, tt.wantLen)
			}
			if v := binary.BigEndian.Uint32(body); v != proto.ProtocolVersion {
				t.Errorf("pval %x", v)
			}
			flags := binary.BigEndian.Uint32(body[4:])
			if flags&proto.ProtoIsServer == 0 || (flags&proto.ProtoSupPgRW != 0) != tt.wantPgRW {
				t.Errorf("flags %x", flags)
			}
			if tt.wantLen == 14 && (body[8] != 'S' || !bytes.Equal(body[9:], make([]byte, 5))) {
				t.Errorf("security requirements %x, want 'S' and no requirements", body[8:])
			}
		})
	}
}

// noSendfile hides the files' descriptors, forcing buffered reads.
type noSendfile struct{ store.Store }

type plainFile struct{ store.File }

func (n noSendfile) Open(ctx context.Context, name string) (store.File, error) {
	f, err := n.Store.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return plainFile{f}, nil
}

func TestRead(t *testing.T) {
	data := patterned(5<<20 + 123)
	for _, mode := range []string{"sendfile", "buffered"} {
		t.Run(mode, func(t *testing.T) {
			st, dir := newOriginStore(t, false)
			if mode == "buffered" {
				st = noSendfile{st}
			}
			writeTestFile(t, filepath.Join(dir, "f"), data)
			r := login(t, startServer(t, Config{}, st))
			h := r.open("/f", proto.OpenRead)
			tests := []struct {
				off  int64
				n    int32
				want []byte
			}{
				{0, int32(len(data)), data},
				{0, 8 << 20, data},
				{100, 1000, data[100:1100]},
				{int64(len(data)) - 10, 100, data[len(data)-10:]},
				{int64(len(data)), 100, nil},
				{int64(len(data)) + 1<<20, 100, nil},
				{5, 0, nil},
			}
			for _, tt := range tests {
				st, body := r.call(proto.ReqRead, readBody(h, tt.off, tt.n), nil)
				if st != proto.StatusOK || !bytes.Equal(body, tt.want) {
					t.Errorf("read %d@%d: status %d, %d bytes, want %d", tt.n, tt.off, st, len(body), len(tt.want))
				}
			}
			st2, body := r.call(proto.ReqRead, readBody(h, -1, 10), nil)
			r.wantErr("negative offset", st2, body, proto.ErrArgInvalid)
			st2, body = r.call(proto.ReqRead, readBody(h, 0, -5), nil)
			r.wantErr("negative length", st2, body, proto.ErrArgInvalid)
			st2, body = r.call(proto.ReqRead, readBody([4]byte{9, 9, 9, 9}, 0, 5), nil)
			r.wantErr("unknown handle", st2, body, proto.ErrFileNotOpen)
		})
	}
}

func TestReadFramesAreChunked(t *testing.T) {
	for _, tt := range []struct {
		mode string
		want []int
	}{
		{"sendfile", []int{8 << 20, 8 << 20, 1<<20 + 5}},
		{"buffered", []int{1 << 20, 1 << 20, 1 << 20, 1 << 20}},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			st, dir := newOriginStore(t, false)
			if tt.mode == "buffered" {
				st = noSendfile{st}
			}
			writeTestFile(t, filepath.Join(dir, "f"), patterned(17<<20+5))
			r := login(t, startServer(t, Config{MaxReadChunk: 1 << 20}, st))
			h := r.open("/f", proto.OpenRead)
			sid := r.send(proto.ReqRead, readBody(h, 0, 20<<20), nil)
			var sizes []int
			for {
				hd, b := r.recv()
				if hd.Stream != sid {
					t.Fatal("wrong stream")
				}
				sizes = append(sizes, len(b))
				if hd.Status == proto.StatusOK {
					break
				}
				if hd.Status != proto.StatusOKSoFar {
					t.Fatalf("status %d", hd.Status)
				}
			}
			if len(sizes) > len(tt.want) {
				sizes = sizes[:len(tt.want)]
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tt.want) {
				t.Fatalf("frame sizes %v, want %v…", sizes, tt.want)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	writeTestFile(t, filepath.Join(dir, "d/f"), []byte("x"))
	r := login(t, addr)
	tests := []struct {
		path string
		opts uint16
		code int32
	}{
		{"/missing", proto.OpenRead, proto.ErrNotFound},
		{"/d", proto.OpenRead, proto.ErrIsDirectory},
		{"/d/f", proto.OpenNew, proto.ErrItExists},
		{"/nodir/f", proto.OpenUpdate, proto.ErrNotFound},
		{"/../etc/passwd", proto.OpenRead, proto.ErrNotAuthorized}, // as xrootd
		{"/d/../../etc/passwd", proto.OpenRead, proto.ErrNotAuthorized},
		{"/d/f\x00/x", proto.OpenRead, proto.ErrArgInvalid},
		{"", proto.OpenRead, proto.ErrArgMissing},
		{"/" + strings.Repeat("a", 5000), proto.OpenRead, proto.ErrArgTooLong},
	}
	for _, tt := range tests {
		var b [16]byte
		binary.BigEndian.PutUint16(b[2:], tt.opts)
		st, body := r.call(proto.ReqOpen, b, []byte(tt.path))
		r.wantErr(fmt.Sprintf("open %.40q", tt.path), st, body, tt.code)
	}
	// "//" and "?cgi" are not part of the path; a trailing NUL is tolerated.
	for _, p := range []string{"//d//f", "/d/./f?authz=abc&x=../../etc", "/d/f\x00"} {
		r.open(p, proto.OpenRead)
	}
}

func TestOpenRetstat(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	writeTestFile(t, filepath.Join(dir, "f"), make([]byte, 1234))
	r := login(t, addr)
	var b [16]byte
	binary.BigEndian.PutUint16(b[2:], proto.OpenRead|proto.OpenRetstat)
	st, body := r.call(proto.ReqOpen, b, []byte("/f"))
	if st != proto.StatusOK || len(body) < 13 || body[len(body)-1] != 0 {
		t.Fatalf("status %d body %q", st, body)
	}
	f := strings.Fields(string(body[12 : len(body)-1]))
	if len(f) != 9 || f[1] != "1234" || f[2] != "48" || f[6] != "0644" {
		t.Fatalf("stat line %q", body[12:])
	}
}

func TestStatForms(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	writeTestFile(t, filepath.Join(dir, "d/f"), make([]byte, 77))
	r := login(t, addr)
	st, body := r.call(proto.ReqStat, [16]byte{}, []byte("/d/f"))
	if f := strings.Fields(strings.TrimRight(string(body), "\x00")); st != proto.StatusOK || len(f) != 9 || f[1] != "77" {
		t.Fatalf("stat path: %d %q", st, body)
	}
	st, body = r.call(proto.ReqStat, [16]byte{}, []byte("/d"))
	if f := strings.Fields(strings.TrimRight(string(body), "\x00")); st != proto.StatusOK || f[2] != "51" {
		t.Fatalf("stat dir: %d %q", st, body)
	}
	h := r.open("/d/f", proto.OpenRead)
	var hb [16]byte
	copy(hb[12:], h[:])
	st, body = r.call(proto.ReqStat, hb, nil)
	if f := strings.Fields(strings.TrimRight(string(body), "\x00")); st != proto.StatusOK || f[1] != "77" {
		t.Fatalf("stat handle: %d %q", st, body)
	}
	st, body = r.call(proto.ReqStat, [16]byte{proto.StatVFS}, []byte("/"))
	if f := strings.Fields(strings.TrimRight(string(body), "\x00")); st != proto.StatusOK || len(f) != 6 || f[0] != "1" {
		t.Fatalf("stat vfs: %d %q", st, body)
	}
	st, body = r.call(proto.ReqStat, [16]byte{proto.StatVFS}, nil)
	r.wantErr("vfs without path", st, body, proto.ErrArgMissing)
	st, body = r.call(proto.ReqStat, [16]byte{}, []byte("/nope"))
	r.wantErr("stat missing", st, body, proto.ErrNotFound)
	st, body = r.call(proto.ReqStatx, [16]byte{}, []byte("/d\n/d/f"))
	if st != proto.StatusOK || !bytes.Equal(body, []byte{proto.StatFlagIsDir, proto.StatFlagFile}) {
		t.Fatalf("statx: %d %x", st, body)
	}
}

func TestDirlist(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	writeTestFile(t, filepath.Join(dir, "d/b"), []byte("bb"))
	writeTestFile(t, filepath.Join(dir, "d/a"), []byte("a"))
	os.Mkdir(filepath.Join(dir, "d/sub"), 0o755)
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	r := login(t, addr)
	st, body := r.call(proto.ReqDirlist, [16]byte{}, []byte("/d"))
	if st != proto.StatusOK || string(body) != "a\nb\nsub\x00" {
		t.Fatalf("plain: %d %q", st, body)
	}
	var b [16]byte
	b[15] = proto.DirlistDstat
	st, body = r.call(proto.ReqDirlist, b, []byte("/d"))
	lines := strings.Split(strings.TrimSuffix(string(body), "\x00"), "\n")
	if st != proto.StatusOK || len(lines) != 8 || lines[0] != "." || lines[1] != "0 0 0 0" || lines[2] != "a" || lines[6] != "sub" {
		t.Fatalf("dstat: %d %q", st, body)
	}
	if f := strings.Fields(lines[5]); len(f) != 9 || f[1] != "2" {
		t.Fatalf("dstat b: %q", lines[5])
	}
	st, body = r.call(proto.ReqDirlist, [16]byte{}, []byte("/empty"))
	if st != proto.StatusOK || len(body) != 0 {
		t.Fatalf("empty plain: %d %q", st, body)
	}
	st, body = r.call(proto.ReqDirlist, b, []byte("/empty"))
	if st != proto.StatusOK || string(body) != ".\n0 0 0 0\x00" {
		t.Fatalf("empty dstat: %d %q", st, body)
	}
	b[15] = proto.DirlistDcksm
	st, body = r.call(proto.ReqDirlist, b, []byte("/d?cks.type=adler32"))
	if want := fmt.Sprintf("[ adler32:%08x ]", adler32.Checksum([]byte("a"))); st != proto.StatusOK || !strings.Contains(string(body), want) {
		t.Fatalf("dcksm: %d %q, want %s", st, body, want)
	}
	st, body = r.call(proto.ReqDirlist, [16]byte{}, []byte("/missing"))
	r.wantErr("dirlist missing", st, body, proto.ErrNotFound)
}

func TestDirlistChunked(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	for i := range 3000 {
		writeTestFile(t, filepath.Join(dir, "many", fmt.Sprintf("file-with-a-long-name-%05d", i)), nil)
	}
	r := login(t, addr)
	var b [16]byte
	b[15] = proto.DirlistDstat
	sid := r.send(proto.ReqDirlist, b, []byte("/many"))
	names := 0
	for first := true; ; first = false {
		h, body := r.recv()
		if h.Stream != sid {
			t.Fatal("wrong stream")
		}
		text := strings.TrimRight(string(body), "\x00\n")
		if first {
			text = strings.TrimPrefix(text, ".\n0 0 0 0\n")
		}
		lines := strings.Split(text, "\n")
		if len(lines)%2 != 0 { // every frame holds whole name+stat pairs
			t.Fatalf("frame with %d lines", len(lines))
		}
		names += len(lines) / 2
		if h.Status == proto.StatusOK {
			break
		}
	}
	if names != 3000 {
		t.Fatalf("%d names, want 3000", names)
	}
}
