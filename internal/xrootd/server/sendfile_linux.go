package server

import (
	"fmt"
	"io"
	"net"
	"syscall"
)

// sendfileOK reports whether this platform sends reads with sendfile(2).
const sendfileOK = true

// sendfile writes hdr and then n bytes of the file fd from offset off to
// the socket, the data going from the page cache to the socket inside the
// kernel. The offset is passed explicitly, so the descriptor's own file
// position — shared by every reader of the file — is never touched. The
// frame is corked so that the header and the data fill whole segments,
// as XRootD does.
func sendfile(tc *net.TCPConn, arm func(), hdr []byte, fd int, off int64, n int) error {
	rc, err := tc.SyscallConn()
	if err != nil {
		return fmt.Errorf("sendfile: %w", err)
	}
	arm()
	var opErr error
	sent, corked := 0, false
	err = rc.Write(func(sock uintptr) bool {
		if !corked {
			syscall.SetsockoptInt(int(sock), syscall.IPPROTO_TCP, syscall.TCP_CORK, 1)
			corked = true
		}
		for sent < len(hdr) {
			m, e := syscall.Write(int(sock), hdr[sent:])
			switch {
			case e == syscall.EINTR:
				continue
			case e == syscall.EAGAIN:
				return false // wait in the poller until the socket drains
			case e != nil:
				opErr = fmt.Errorf("send header: %w", e)
				return true
			}
			sent += m
		}
		for n > 0 {
			m, e := syscall.Sendfile(int(sock), fd, &off, n)
			if m > 0 {
				n -= m
				// Progress: the deadline bounds the time without any.
				arm()
			}
			switch {
			case e == syscall.EINTR:
				continue
			case e == syscall.EAGAIN:
				return false
			case e != nil:
				opErr = fmt.Errorf("sendfile: %w", e)
				return true
			case m == 0:
				opErr = fmt.Errorf("sendfile: file ended %d bytes early: %w", n, io.ErrUnexpectedEOF)
				return true
			}
		}
		return true
	})
	rc.Control(func(sock uintptr) { syscall.SetsockoptInt(int(sock), syscall.IPPROTO_TCP, syscall.TCP_CORK, 0) })
	if err != nil {
		return fmt.Errorf("sendfile: %w", err)
	}
	return opErr
}
