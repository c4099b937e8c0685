package interop

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/xrootd/proto"
	"sitebox/test/peers"
)

// vectorWriteClient builds testdata/vectorwrite.cc against the XRootD
// client library: XrdCl's File::VectorWrite (kXR_writev) is in neither
// xrdcp nor the Python bindings.
func vectorWriteClient(t *testing.T) string {
	t.Helper()
	cxx := peers.Require(t, "g++")
	peers.RequireFile(t, "/usr/include/xrootd/XrdCl/XrdClFile.hh", "the XRootD client headers (libxrootd-client-dev)")
	bin := filepath.Join(t.TempDir(), "vectorwrite")
	out, err := exec.Command(cxx, "-O1", "-o", bin, "testdata/vectorwrite.cc", "-I/usr/include/xrootd", "-lXrdCl").CombinedOutput()
	if err != nil {
		t.Fatalf("build the XrdCl vector-write client: %v\n%s", err, out)
	}
	return bin
}

// TestXrootdWritev performs kXR_writev with XrdCl's File::VectorWrite
// against xrootd 5.5 and a box side by side: segments land where they
// say, a list of 1024 one-byte segments is served, and 1025 segments
// (3002), a segment larger than one transfer (3008) and a file open for
// reading (3004) are refused with xrootd's codes. With a raw client: a
// segment for a handle not open is 3004 on both, and a writev whose data
// stops short of its lengths writes nothing on either.
func TestXrootdWritev(t *testing.T) {
	client := vectorWriteClient(t)
	xdata := t.TempDir()
	xaddr := startXrootdOrigin(t, xdata)
	b := startBox(t, 1)
	big := "2097153" // one byte more than both servers' largest transfer
	for _, s := range []struct{ name, addr, prefix, data string }{
		{"xrootd", xaddr, "", xdata},
		{"sitebox", b.rootHost, "/store", b.pools[0]},
	} {
		t.Run(s.name, func(t *testing.T) {
			url := "root://" + s.addr + "/" + s.prefix + "/wv/f.bin"
			local := filepath.Join(s.data, "wv", "f.bin")
			for _, c := range []struct {
				args []string
				want string // the client's line
				file string // the file after it; "" to skip
			}{
				{[]string{"write"}, "ok", "hello world\x00\x00\x00\x00\x00\x00\x00\x00\x00far"},
				{[]string{"many", "1024"}, "ok", strings.Repeat("abcdefghijklmnopqrstuvwxyz", 40)[:1024]},
				{[]string{"many", "1025"}, "error 3002", ""},
				{[]string{"big", big}, "error 3008", ""},
				{[]string{"readonly"}, "error 3004", strings.Repeat("abcdefghijklmnopqrstuvwxyz", 40)[:1024]},
			} {
				if c.args[0] == "readonly" {
					os.WriteFile(local, []byte(c.file), 0o644) // what the earlier cases left may be gone
				}
				out, _ := run(t, false, client, append([]string{url}, c.args...)...)
				if !strings.HasPrefix(strings.TrimSpace(out), c.want) {
					t.Errorf("VectorWrite %s: %q, want %q", strings.Join(c.args, " "), strings.TrimSpace(out), c.want)
				}
				if c.file != "" {
					if got, _ := os.ReadFile(local); string(got) != c.file {
						t.Errorf("after VectorWrite %s the file holds %q, want %q", strings.Join(c.args, " "), got, c.file)
					}
				}
			}
			writevRawRefusals(t, s.name, s.addr, s.prefix, s.data)
		})
	}
}

// writevRawRefusals sends what XrdCl never sends: a segment for a handle
// this session has not opened, and a writev whose data stops short.
func writevRawRefusals(t *testing.T, name, addr, prefix, data string) {
	r, err := rootLoginFrom(addr, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer r.c.Close()
	h, err := r.open(prefix+"/wv/raw.bin", proto.OpenDelete|proto.OpenUpdate|proto.OpenMkpath)
	if err != nil {
		t.Fatal(err)
	}
	other := h
	other[3] ^= 0x55
	if err := r.send(proto.ReqWritev, [16]byte{}, writeList(wvSeg{other, 0, 4})); err != nil {
		t.Fatal(err)
	}
	r.write([]byte("data"))
	hdr, body, err := r.recv()
	if err == nil && hdr.Status == proto.StatusError {
		err = kxrError(body)
	}
	if xe, ok := err.(*xrdErr); !ok || xe.code != proto.ErrFileNotOpen {
		t.Errorf("writev for a handle not open: %v, want error 3004", err)
	}
	if name == "sitebox" {
		// The refusal read the 4 bytes of data; the session goes on.
		if st, _, err := r.call(proto.ReqPing, [16]byte{}, nil); err != nil || st != proto.StatusOK {
			t.Errorf("session after a refused writev: ping %d %v", st, err)
		}
	} else {
		t.Logf("%s after a writev for a handle not open: connection closed: %v", name, closedBy(r.c, time.Now().Add(2*time.Second)))
	}

	// A length that lies: 100 bytes announced, 10 sent, then the client
	// leaves. Nothing of the incomplete segment is written.
	r2, err := rootLoginFrom(addr, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	h2, err := r2.open(prefix+"/wv/short.bin", proto.OpenDelete|proto.OpenUpdate|proto.OpenMkpath)
	if err != nil {
		t.Fatal(err)
	}
	r2.send(proto.ReqWritev, [16]byte{}, writeList(wvSeg{h2, 0, 100}))
	r2.write([]byte("0123456789"))
	r2.c.Close()
	if r3, err := rootLoginFrom(addr, "127.0.0.1"); err != nil {
		t.Errorf("%s after a client left mid-writev: %v", name, err)
	} else {
		r3.c.Close()
	}
	time.Sleep(200 * time.Millisecond) // the server notices the client left
	if got, err := os.ReadFile(filepath.Join(data, "wv", "short.bin")); err != nil || len(got) != 0 {
		t.Errorf("%s: a writev whose data stopped short left %q (%v), want an empty file", name, got, err)
	}
}

// wvSeg is one element of a write_list.
type wvSeg struct {
	h   [4]byte
	off int64
	n   int32
}

func writeList(segs ...wvSeg) []byte {
	var b []byte
	for _, s := range segs {
		b = append(b, s.h[:]...)
		b = binary.BigEndian.AppendUint32(b, uint32(s.n))
		b = binary.BigEndian.AppendUint64(b, uint64(s.off))
	}
	return b
}
