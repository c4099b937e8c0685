package client

import (
	"bytes"
	"encoding/binary"
	"errors"
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

// A server that cannot be reached fails a request with ErrUnavailable
// once the wait budget (MaxWait) is spent, after trying more than once;
// the next request tries it once and fails at once, until it is reached
// again.
func TestServerGoneFailsWithinBudget(t *testing.T) {
	l, addr := downStatServer(t)
	fs := NewFSOptions(addr, Options{Options: outbound.Options{Reconnect: true, MaxWait: time.Second}})
	defer fs.Close()
	if _, err := fs.Stat(testCtx(t), "/x"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("stat of a server that is gone: %v, want ErrUnavailable", err)
	}
	tries := l.refused.Load()
	if tries < 2 {
		t.Errorf("the server was tried %d times; want it tried again within the budget", tries)
	}
	if _, err := fs.Stat(testCtx(t), "/x"); !errors.Is(err, store.ErrUnavailable) || l.refused.Load() != tries+1 {
		t.Errorf("stat of a server known gone: %v after %d tries; want ErrUnavailable after one", err, l.refused.Load()-tries)
	}
	l.up.Store(true)
	if _, err := fs.Stat(testCtx(t), "/x"); err != nil {
		t.Errorf("stat once the server is back: %v", err)
	}
}

// A server down for a moment: the request waits for it and is answered.
func TestServerBackWithinBudget(t *testing.T) {
	l, addr := downStatServer(t)
	fs := NewFSOptions(addr, Options{Options: outbound.Options{Reconnect: true, MaxWait: 20 * time.Second}})
	defer fs.Close()
	done := make(chan error, 1)
	go func() {
		_, err := fs.Stat(testCtx(t), "/x")
		done <- err
	}()
	time.Sleep(600 * time.Millisecond) // a few connections closed
	l.up.Store(true)
	if err := <-done; err != nil {
		t.Fatalf("stat while the server restarted: %v", err)
	}
}

// restarting is a listener that closes each connection it takes until up
// is set.
type restarting struct {
	net.Listener
	up      atomic.Bool
	refused atomic.Int32 // connections closed
}

func (l *restarting) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || l.up.Load() {
			return c, err
		}
		l.refused.Add(1)
		c.Close()
	}
}

// An open that creates or truncates is not sent again after the
// connection dropped before its answer: the server may have done it.
func TestMutableOpenNotResent(t *testing.T) {
	var opens atomic.Int32
	addr := fakeServer(t, func(c net.Conn, req *proto.Request) {
		opens.Add(1)
		c.Close()
	})
	fs := NewFSOptions(addr, Options{Options: outbound.Options{Reconnect: true, MaxWait: 5 * time.Second}})
	defer fs.Close()
	if _, err := fs.Create(testCtx(t), "/x", store.CreateOptions{Truncate: true}); err == nil {
		t.Fatal("create on a dropped connection succeeded")
	}
	if opens.Load() != 1 {
		t.Errorf("a truncating open was sent %d times, want once", opens.Load())
	}
}

// A file open for reading whose connection drops is opened again on a
// new connection, once for all the reads that failed together, and the
// reads are sent again on the new handle; a file open for writing is
// not opened again.
func TestReadReopensAfterDrop(t *testing.T) {
	var opens, dropped atomic.Int32
	data := bytes.Repeat([]byte("0123456789"), 100)
	addr := fakeServer(t, func(c net.Conn, req *proto.Request) {
		switch req.ID {
		case proto.ReqOpen:
			h := opens.Add(1)
			body := make([]byte, 12)
			binary.BigEndian.PutUint32(body, uint32(h))
			send(c, req.Stream, proto.StatusOK, append(body, "1 1000 16 1700000000\x00"...))
		case proto.ReqRead:
			h := binary.BigEndian.Uint32(req.Body[0:4])
			if h == 1 || h == 3 { // the first handle of each file dies with its connection
				dropped.Add(1)
				c.Close()
				return
			}
			off := binary.BigEndian.Uint64(req.Body[4:12])
			n := binary.BigEndian.Uint32(req.Body[12:16])
			send(c, req.Stream, proto.StatusOK, data[off:min(off+uint64(n), uint64(len(data)))])
		case proto.ReqWrite:
			c.Close()
		default:
			send(c, req.Stream, proto.StatusOK, nil)
		}
	})
	fs := NewFSOptions(addr, Options{Options: outbound.Options{Reconnect: true, MaxWait: 5 * time.Second}})
	defer fs.Close()
	f, err := fs.Open(testCtx(t), "/x")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			buf := make([]byte, 100)
			n, err := f.ReadAt(buf, int64(i*100))
			if err != nil || !bytes.Equal(buf[:n], data[i*100:i*100+100]) {
				t.Errorf("read %d after the drop: %d bytes, %v", i, n, err)
			}
		})
	}
	wg.Wait()
	if opens.Load() != 2 {
		t.Errorf("%d opens; want the file opened again once", opens.Load())
	}
	f.Close()

	w, err := fs.Create(testCtx(t), "/y", store.CreateOptions{Truncate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("x"), 0); err == nil {
		t.Fatal("a write on a dropped connection succeeded")
	}
	if opens.Load() != 3 {
		t.Errorf("%d opens; a file open for writing must not be opened again", opens.Load())
	}
}

// A director that knows one server for a file keeps sending the request
// back to it while it restarts: with Reconnect the client waits for the
// server (within the budget) instead of failing at the first refusal.
func TestDirectorsOnlyServerRestarts(t *testing.T) {
	data, dataAddr := downStatServer(t)
	host, port, _ := net.SplitHostPort(dataAddr)
	var asked atomic.Int32
	director := fakeServer(t, func(c net.Conn, req *proto.Request) {
		asked.Add(1)
		b := make([]byte, 4)
		p, _ := strconv.Atoi(port)
		binary.BigEndian.PutUint32(b, uint32(p))
		send(c, req.Stream, proto.StatusRedirect, append(b, host...))
	})
	fs := NewFSOptions(director, Options{Options: outbound.Options{MaxWait: 20 * time.Second}})
	defer fs.Close()
	if _, err := fs.Stat(testCtx(t), "/x"); err == nil {
		t.Fatal("stat through a director whose one server is down succeeded without Reconnect")
	}
	fs = NewFSOptions(director, Options{Options: outbound.Options{Reconnect: true, MaxWait: 20 * time.Second}})
	defer fs.Close()
	done := make(chan error, 1)
	go func() {
		_, err := fs.Stat(testCtx(t), "/x")
		done <- err
	}()
	for data.refused.Load() < 4 { // the director asked again, the server refused again
		time.Sleep(10 * time.Millisecond)
	}
	data.up.Store(true)
	if err := <-done; err != nil {
		t.Fatalf("stat through a director while its one server restarted: %v", err)
	}
}

// downStatServer is a fake server answering every request with a stat,
// down (each connection closed as it is taken, as by a server stopping
// or starting) until its up is set. Not a closed port: a client dialling
// one in a loop can connect to itself, TCP's simultaneous open.
func downStatServer(t *testing.T) (*restarting, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &restarting{Listener: ln}
	serveFake(t, l, func(c net.Conn, req *proto.Request) {
		send(c, req.Stream, proto.StatusOK, []byte("1 5 16 0\x00"))
	})
	return l, ln.Addr().String()
}
