//go:build linux

package nbio

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func tcpPair(t *testing.T) (server, client *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		done <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-done
	if s == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { s.Close(); c.Close() })
	return s.(*net.TCPConn), c.(*net.TCPConn)
}

func rawConn(t *testing.T, c *net.TCPConn) syscall.RawConn {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// Writev sends every part in order even when the socket fills up and the
// writer has to wait in the poller for the reader, reporting progress.
func TestWritevWaitsForSlowReader(t *testing.T) {
	s, c := tcpPair(t)
	s.SetWriteBuffer(16 << 10)
	c.SetReadBuffer(16 << 10)
	parts := [][]byte{[]byte("head"), make([]byte, 3<<20), nil, []byte("tail")}
	rand.Read(parts[1])
	want := bytes.Join(parts, nil)
	got := make(chan []byte)
	go func() {
		time.Sleep(50 * time.Millisecond) // let the socket fill
		b, _ := io.ReadAll(io.LimitReader(c, int64(len(want))))
		got <- b
	}()
	progress := 0
	if err := Writev(rawConn(t, s), parts, func() { progress++ }); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(<-got, want) {
		t.Fatal("the reader got different bytes")
	}
	if progress < 2 {
		t.Fatalf("progress reported %d times; a write that waited must report each step", progress)
	}
}

// Read waits for data, honours the read deadline and reports the peer's
// close as io.EOF.
func TestReadWaitsAndEnds(t *testing.T) {
	s, c := tcpPair(t)
	rc := rawConn(t, s)
	go func() {
		time.Sleep(20 * time.Millisecond)
		c.Write([]byte("hello"))
	}()
	buf := make([]byte, 16)
	n, err := Read(rc, buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	s.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err = Read(rc, buf)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read past the deadline = %v, want a timeout", err)
	}
	s.SetReadDeadline(time.Time{})
	c.Close()
	if _, err := Read(rc, buf); err != io.EOF {
		t.Fatalf("Read after the peer closed = %v, want io.EOF", err)
	}
	s.Close()
	if _, err := Read(rc, buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read of a closed connection = %v, want net.ErrClosed", err)
	}
}

// ReadResident copies bytes the page cache holds and stops at the end
// of the file.
func TestReadResident(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	data := make([]byte, 100<<10)
	rand.Read(data)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 8<<10)
	n, err := ReadResident(int(f.Fd()), buf, 4096+7)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("this filesystem cannot tell what the page cache holds")
	}
	if err != nil || n != len(buf) || !bytes.Equal(buf, data[4096+7:][:len(buf)]) {
		t.Fatalf("ReadResident = %d, %v; want the file's bytes", n, err)
	}
	n, err = ReadResident(int(f.Fd()), buf, int64(len(data)-100))
	if err != io.EOF || n != 100 || !bytes.Equal(buf[:n], data[len(data)-100:]) {
		t.Fatalf("ReadResident at the end = %d, %v; want 100, io.EOF", n, err)
	}
}
