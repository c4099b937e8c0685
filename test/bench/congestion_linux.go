package bench

import (
	"net"

	"golang.org/x/sys/unix"
)

// loopbackCongestion is the congestion control a TCP connection over
// 127.0.0.1 gets here, asked of one such connection: the namespace's
// default, unless the loopback route names its own (congctl). "" if no
// connection could be made (loopback down).
func loopbackCongestion() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return ""
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return ""
	}
	defer c.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return ""
	}
	var cc string
	raw.Control(func(fd uintptr) {
		cc, err = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	})
	if err != nil {
		return ""
	}
	return cc
}
