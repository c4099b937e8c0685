package davclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/outbound"
	"sitebox/internal/store"
)

// restarting is a server that is down (each connection closed as it
// is taken, as a server stopping or starting does) until up is set.
// Not a closed port: a client dialling one in a loop can connect to
// itself (TCP's simultaneous open), and the port is no longer free.
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

func startRestarting(t *testing.T) *restarting {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &restarting{Listener: ln}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A read sent while the server restarts waits for it (within MaxWait)
// and is answered; an upload is not sent again.
func TestReadWaitsForRestartingServer(t *testing.T) {
	l := startRestarting(t)
	f, err := New("http://"+l.Addr().String(), Options{Options: outbound.Options{Reconnect: true, MaxWait: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.send(testCtx(t), http.MethodPut, f.url("/up"), strings.NewReader("data"), nil); err == nil || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("an upload to a server that is down: %v; want it failed at once, not waited for", err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := f.send(testCtx(t), http.MethodGet, f.url("/f"), nil, nil)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "hello" {
				err = errors.New("wrong body " + string(b))
			}
		}
		done <- err
	}()
	time.Sleep(600 * time.Millisecond) // a few connections closed
	l.up.Store(true)
	if err := <-done; err != nil {
		t.Fatalf("a read while the server restarted: %v", err)
	}
}

// A server that stays down fails a read with ErrUnavailable once the
// budget is spent, and the next at once (after one try), until it
// answers again; without Reconnect, a read fails at once.
func TestReadFailsWhenServerGone(t *testing.T) {
	l := startRestarting(t)
	f, err := New("http://"+l.Addr().String(), Options{Options: outbound.Options{Reconnect: true, MaxWait: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.send(testCtx(t), "PROPFIND", f.url("/d"), nil, nil); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a listing of a server that is gone: %v, want ErrUnavailable", err)
	}
	tries := l.refused.Load()
	if _, err := f.send(testCtx(t), "PROPFIND", f.url("/d"), nil, nil); !errors.Is(err, store.ErrUnavailable) || l.refused.Load() != tries+1 {
		t.Errorf("a listing of a server known gone: %v after %d tries; want ErrUnavailable after one", err, l.refused.Load()-tries)
	}
	l.up.Store(true)
	resp, err := f.send(testCtx(t), http.MethodGet, f.url("/f"), nil, nil)
	if err != nil {
		t.Fatalf("a read once the server is back: %v", err)
	}
	resp.Body.Close()
	l.up.Store(false)
	f, err = New("http://"+l.Addr().String(), Options{Options: outbound.Options{MaxWait: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.send(testCtx(t), "PROPFIND", f.url("/d"), nil, nil); err == nil || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a listing of a server that is gone, without Reconnect: %v; want it failed at once", err)
	}
}
