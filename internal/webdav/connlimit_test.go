package webdav

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(inner, 2, nil)
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	wantAccepted := func(what string) net.Conn {
		select {
		case c := <-accepted:
			return c
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: not accepted", what)
			return nil
		}
	}
	dial()
	first := wantAccepted("first")
	dial()
	wantAccepted("second")
	third := dial()
	third.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := third.Read(make([]byte, 1)); err == nil {
		t.Fatal("third connection from the address was not closed")
	}
	first.Close()
	first.Close() // a second close gives back nothing more
	dial()
	wantAccepted("after a close")
	dial()
	select {
	case <-accepted:
		t.Fatal("a double close freed two places")
	case <-time.After(200 * time.Millisecond):
	}
}

// Connections past a network's limit are refused as past an address's;
// past either, one idle between requests makes room (the one idle
// longest, counted under that limit), one in the middle of a request or
// not yet asked anything never does.
func TestConnLimiterNetworksAndIdle(t *testing.T) {
	lim := NewConnLimiter(2, 3, nil)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		ConnState: lim.ConnState}
	go srv.Serve(lim.Listener(inner))
	t.Cleanup(func() { srv.Close() })
	dial := func(ip string) *bufio.ReadWriter {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		c, err := d.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(5 * time.Second))
		return bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c))
	}
	// served asks for / and reports whether it was answered; the
	// connection is idle afterwards.
	served := func(rw *bufio.ReadWriter) bool {
		rw.WriteString("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		rw.Flush()
		resp, err := http.ReadResponse(rw.Reader, nil)
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		time.Sleep(20 * time.Millisecond) // the server marks it idle
		return resp.StatusCode == http.StatusOK
	}
	busy := func(rw *bufio.ReadWriter) { rw.WriteString("GET / HTTP/1.1\r\n"); rw.Flush() } // headers unfinished

	idle1 := dial("127.0.0.2")
	if !served(idle1) {
		t.Fatal("first connection not served")
	}
	busy1 := dial("127.0.0.2")
	busy(busy1)
	time.Sleep(20 * time.Millisecond)
	third := dial("127.0.0.2") // past the address's limit: idle1 makes room
	if !served(third) || served(idle1) {
		t.Fatal("a connection past the address's limit did not take the idle one's place")
	}
	neighbour := dial("127.0.0.3") // the network's third
	busy(neighbour)
	time.Sleep(20 * time.Millisecond)
	// third is idle: past the network's limit, it makes room.
	n := dial("127.0.0.4")
	if !served(n) || served(third) {
		t.Fatal("a connection past the network's limit did not take the idle one's place")
	}
	busy(n)
	time.Sleep(20 * time.Millisecond)
	// Nothing idle left in the network: refused.
	if served(dial("127.0.0.5")) {
		t.Fatal("a connection past the network's limit was served with none idle")
	}
	if !served(dial("127.0.1.2")) {
		t.Fatal("another network was refused")
	}
}
