package webdav

import (
	"net"
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
