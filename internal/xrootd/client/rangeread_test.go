package client

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/outbound"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// rangeServer serves content, each open under a new handle (1, 2, …);
// every read is answered by read, given the handle and the range asked.
func rangeServer(t *testing.T, content []byte, read func(c net.Conn, req *proto.Request, h uint32, off, n int64)) string {
	var opens atomic.Uint32
	return fakeServer(t, func(c net.Conn, req *proto.Request) {
		switch req.ID {
		case proto.ReqOpen:
			body := binary.BigEndian.AppendUint32(nil, opens.Add(1))
			body = append(body, make([]byte, 8)...)
			send(c, req.Stream, proto.StatusOK, append(body, "1 "+strconv.Itoa(len(content))+" 16 1700000000\x00"...))
		case proto.ReqRead:
			read(c, req, binary.BigEndian.Uint32(req.Body[0:4]), int64(binary.BigEndian.Uint64(req.Body[4:12])), int64(binary.BigEndian.Uint32(req.Body[12:16])))
		default:
			send(c, req.Stream, proto.StatusOK, nil)
		}
	})
}

// sendFrames answers a read with data in frames of frame bytes, all but
// the last kXR_oksofar.
func sendFrames(c net.Conn, s proto.StreamID, data []byte, frame int) {
	for len(data) > frame {
		send(c, s, proto.StatusOKSoFar, data[:frame])
		data = data[frame:]
	}
	send(c, s, proto.StatusOK, data)
}

func randomContent(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func openRange(t *testing.T, addr string, opts Options) *File {
	t.Helper()
	fs := NewFSOptions(addr, opts)
	t.Cleanup(func() { fs.Close() })
	f, err := fs.Open(testCtx(t), "/x")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f.(*File)
}

// A streamed read yields exactly its range, through Read and through
// WriteTo, whatever the server's frames: odd sizes, several requests
// (a range past maxIO), a range not at the start.
func TestReadRangeStreams(t *testing.T) {
	content := randomContent(maxIO + 300_000)
	var reads atomic.Int32
	addr := rangeServer(t, content, func(c net.Conn, req *proto.Request, _ uint32, off, n int64) {
		reads.Add(1)
		sendFrames(c, req.Stream, content[off:min(off+n, int64(len(content)))], 100_003)
	})
	f := openRange(t, addr, Options{})
	for _, r := range []struct{ off, n int64 }{{0, int64(len(content))}, {12345, 1 << 20}, {int64(len(content)) - 7, 7}, {5, 0}} {
		body, err := f.ReadRange(testCtx(t), r.off, r.n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(body)
		body.Close()
		if err != nil || !bytes.Equal(got, content[r.off:r.off+r.n]) {
			t.Errorf("Read of %d+%d: %d bytes, %v; want the range", r.off, r.n, len(got), err)
		}
		body, err = f.ReadRange(testCtx(t), r.off, r.n)
		if err != nil {
			t.Fatal(err)
		}
		var w bytes.Buffer
		n, err := body.(io.WriterTo).WriteTo(&w)
		body.Close()
		if err != nil || n != r.n || !bytes.Equal(w.Bytes(), content[r.off:r.off+r.n]) {
			t.Errorf("WriteTo of %d+%d: %d bytes, %v; want the range", r.off, r.n, n, err)
		}
	}
	if got := reads.Load(); got != 2*(2+1+1) {
		t.Errorf("%d kXR_read requests; want two for the range past maxIO, one for the others, none for nothing", got)
	}
}

// A server that breaks mid-range, and again once the file is opened
// again, fails the read with an error, never with fewer bytes and
// io.EOF: Read returns an error after the bytes that came, WriteTo too.
func TestReadRangeBreaksMidRange(t *testing.T) {
	content := randomContent(1 << 20)
	addr := rangeServer(t, content, func(c net.Conn, req *proto.Request, _ uint32, off, n int64) {
		if off != 0 { // the rest asked for again: the connection drops at once
			c.Close()
			return
		}
		send(c, req.Stream, proto.StatusOKSoFar, content[off:off+300_000])
		hdr := make([]byte, 8)
		proto.PutResponseHeader(hdr, proto.ResponseHeader{Stream: req.Stream, Status: proto.StatusOK, Dlen: int32(n - 300_000)})
		c.Write(append(hdr, content[off+300_000:off+400_000]...))
		c.Close()
	})
	f := openRange(t, addr, Options{Options: outbound.Options{Reconnect: true, MaxWait: time.Second}})
	body, err := f.ReadRange(testCtx(t), 0, int64(len(content)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(body)
	body.Close()
	if err == nil || errors.Is(err, io.EOF) || !bytes.Equal(got, content[:len(got)]) {
		t.Fatalf("Read from a server that breaks: %d bytes, %v; want the bytes that came and an error", len(got), err)
	}
	body, _ = f.ReadRange(testCtx(t), 0, int64(len(content)))
	var w bytes.Buffer
	n, err := body.(io.WriterTo).WriteTo(&w)
	body.Close()
	if err == nil || n >= int64(len(content)) || !bytes.Equal(w.Bytes(), content[:n]) {
		t.Fatalf("WriteTo from a server that breaks: %d bytes, %v; want an error", n, err)
	}
}

// A connection that drops mid-range once is recovered: the file is
// opened again and the rest of the range asked for from where the data
// stopped, so the range arrives whole.
func TestReadRangeRecoversDrop(t *testing.T) {
	content := randomContent(1 << 20)
	var mu sync.Mutex
	var asked []int64
	addr := rangeServer(t, content, func(c net.Conn, req *proto.Request, h uint32, off, n int64) {
		mu.Lock()
		asked = append(asked, off)
		mu.Unlock()
		if h == 1 {
			send(c, req.Stream, proto.StatusOKSoFar, content[off:off+300_000])
			c.Close()
			return
		}
		sendFrames(c, req.Stream, content[off:off+n], 64<<10)
	})
	f := openRange(t, addr, Options{Options: outbound.Options{Reconnect: true, MaxWait: 5 * time.Second}})
	body, err := f.ReadRange(testCtx(t), 1000, int64(len(content))-1000)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(body)
	body.Close()
	if err != nil || !bytes.Equal(got, content[1000:]) {
		t.Fatalf("read across a dropped connection: %d bytes, %v", len(got), err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[1] != 301_000 {
		t.Errorf("reads asked at %v; want the rest asked at 301000 after the drop", asked)
	}
}

// The server's answer decides: fewer bytes than asked (the file ends
// within the range), an error after some data, more bytes than asked:
// each fails the read.
func TestReadRangeBadAnswers(t *testing.T) {
	content := randomContent(500_000)
	for name, answer := range map[string]func(c net.Conn, s proto.StreamID, off, n int64){
		"short": func(c net.Conn, s proto.StreamID, off, n int64) {
			sendFrames(c, s, content[off:off+n-1000], 100_000)
		},
		"error": func(c net.Conn, s proto.StreamID, off, n int64) {
			send(c, s, proto.StatusOKSoFar, content[off:off+100_000])
			send(c, s, proto.StatusError, append(binary.BigEndian.AppendUint32(nil, uint32(proto.ErrIOError)), "disk gone\x00"...))
		},
		"long": func(c net.Conn, s proto.StreamID, off, n int64) {
			send(c, s, proto.StatusOK, content[off:off+n+10])
		},
	} {
		t.Run(name, func(t *testing.T) {
			addr := rangeServer(t, content, func(c net.Conn, req *proto.Request, _ uint32, off, n int64) { answer(c, req.Stream, off, n) })
			f := openRange(t, addr, Options{})
			body, err := f.ReadRange(testCtx(t), 100_000, 300_000)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(body)
			body.Close()
			if err == nil || len(got) > 300_000 || !bytes.Equal(got, content[100_000:100_000+len(got)]) {
				t.Fatalf("%d bytes, %v; want an error and no more than the file's bytes", len(got), err)
			}
			if name == "short" && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("a range past the end: %v, want io.ErrUnexpectedEOF", err)
			}
			if name == "error" && !errors.Is(err, store.ErrIO) {
				t.Errorf("a server error mid-range: %v, want the server's error", err)
			}
		})
	}
}

// A read closed mid-range leaves the connection working: the rest of
// its answer is read and dropped, and the next request is answered.
func TestReadRangeClosedEarly(t *testing.T) {
	content := randomContent(2 << 20)
	addr := rangeServer(t, content, func(c net.Conn, req *proto.Request, _ uint32, off, n int64) {
		sendFrames(c, req.Stream, content[off:off+n], 1<<20)
	})
	f := openRange(t, addr, Options{})
	body, err := f.ReadRange(testCtx(t), 0, int64(len(content)))
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 1000)
	if _, err := io.ReadFull(body, p); err != nil || !bytes.Equal(p, content[:1000]) {
		t.Fatalf("first bytes: %v", err)
	}
	body.Close()
	if _, err := body.Read(p); err == nil {
		t.Error("Read after Close succeeded")
	}
	buf := make([]byte, 5000)
	if n, err := f.ReadAtContext(testCtx(t), buf, 7000); n != len(buf) || err != nil || !bytes.Equal(buf, content[7000:12000]) {
		t.Fatalf("read after a streamed read was closed: %d, %v", n, err)
	}
	if c, _ := f.at(); c.Err() != nil {
		t.Errorf("the connection failed: %v", c.Err())
	}
}
