package peers

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// startToxiproxy runs a toxiproxy-server for the test and a link to
// upstream through it.
func startToxiproxy(t *testing.T, upstream string) *Link {
	t.Helper()
	bin := RequireToxiproxy(t)
	ctx := context.Background()
	tp, err := StartToxiproxy(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tp.Stop)
	l, err := tp.Proxy(ctx, "test", upstream)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// serveTCP runs handle for every connection to a fresh 127.0.0.1 listener.
func serveTCP(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); defer c.Close(); handle(c) }()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(t *testing.T, addr string) time.Duration {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	buf := []byte("ping")
	if _, err := c.Write(buf); err != nil { // warm up: connect through the proxy
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c.Write(buf)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

func TestToxiproxyLatency(t *testing.T) {
	echo := serveTCP(t, func(c net.Conn) { io.Copy(c, c) })
	l := startToxiproxy(t, echo)
	ctx := context.Background()
	if rtt := roundTrip(t, l.Addr); rtt > 40*time.Millisecond {
		t.Fatalf("round trip without toxics %v, want well under 40ms", rtt)
	}
	if err := l.SetLatency(ctx, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	rtt := roundTrip(t, l.Addr)
	if rtt < 95*time.Millisecond || rtt > 400*time.Millisecond {
		t.Fatalf("round trip with 50ms each way: %v, want about 100ms", rtt)
	}
	if err := l.RemoveToxics(ctx); err != nil {
		t.Fatal(err)
	}
	if rtt := roundTrip(t, l.Addr); rtt > 40*time.Millisecond {
		t.Fatalf("round trip after removing toxics: %v", rtt)
	}
}

// TestToxiproxyBandwidth checks the limit holds for each connection on its
// own: two parallel readers each get about the full rate.
func TestToxiproxyBandwidth(t *testing.T) {
	const size, rate = 2 << 20, 4_000_000 // 2 MiB at 4 MB/s: about 0.52 s
	payload := make([]byte, size)
	src := serveTCP(t, func(c net.Conn) { c.Write(payload) })
	l := startToxiproxy(t, src)
	if err := l.SetBandwidth(context.Background(), rate); err != nil {
		t.Fatal(err)
	}
	read := func() error {
		c, err := net.Dial("tcp", l.Addr)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadFull(c, make([]byte, size))
		return err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = read() }()
	}
	wg.Wait()
	took := time.Since(start)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := time.Duration(float64(size) / rate * float64(time.Second))
	t.Logf("two connections, %d bytes each at %d B/s: %v (one alone: %v)", size, rate, took, want)
	if took < want*8/10 {
		t.Fatalf("took %v, faster than the %d B/s limit allows (%v)", took, rate, want)
	}
	if took > want*17/10 {
		t.Fatalf("took %v: the limit looks shared between connections, not per connection", took)
	}
}

func TestToxiproxyCut(t *testing.T) {
	chunk := make([]byte, 64<<10)
	src := serveTCP(t, func(c net.Conn) { // an endless slow transfer
		for {
			if _, err := c.Write(chunk); err != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	l := startToxiproxy(t, src)
	c, err := net.Dial("tcp", l.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, 256<<10)); err != nil {
		t.Fatal(err)
	}
	if err := l.Cut(context.Background()); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	// Data already in flight may still arrive; then the read must fail.
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Logf("read after cut: %v", err)
	}
	if d := time.Since(cut); d > 3*time.Second {
		t.Fatalf("connection still open %v after the cut", d)
	}
	// The link takes new connections again.
	c2, err := net.Dial("tcp", l.Addr)
	if err != nil {
		t.Fatalf("dial after cut: %v", err)
	}
	defer c2.Close()
	c2.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c2, make([]byte, 64<<10)); err != nil {
		t.Fatalf("read after cut: %v", err)
	}
}
