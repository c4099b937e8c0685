package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// loopbackRoutesCongestion names cc as the congestion control of this
// namespace's local routes to 127.0.0.0/8 and 127.0.0.1 (as `ip route
// replace … congctl cc` does), which every loopback connection takes.
// A namespace other than the host's may make only the congestion
// controls in net.ipv4.tcp_allowed_congestion_control its default; a
// route's own is not so limited.
func loopbackRoutesCongestion(cc string) error {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("netlink: %w", err)
	}
	defer unix.Close(fd)
	kernel := &unix.SockaddrNetlink{Family: unix.AF_NETLINK}
	for i, r := range []struct {
		dst  [4]byte
		bits uint8
	}{{[4]byte{127, 0, 0, 0}, 8}, {[4]byte{127, 0, 0, 1}, 32}} {
		seq := uint32(i + 1)
		if err := unix.Sendto(fd, localRouteRequest(seq, r.dst, r.bits, lo.Index, cc), 0, kernel); err != nil {
			return fmt.Errorf("netlink: %w", err)
		}
		if err := netlinkAck(fd, seq); err != nil {
			return fmt.Errorf("route %v/%d congctl %s: %w", net.IP(r.dst[:]), r.bits, cc, err)
		}
	}
	return nil
}

// localRouteRequest is an RTM_NEWROUTE replacing the kernel's local route
// to dst/bits on interface ifindex with one that names cc.
func localRouteRequest(seq uint32, dst [4]byte, bits uint8, ifindex int, cc string) []byte {
	// struct rtmsg: family, dst_len, src_len, tos, table, protocol,
	// scope, type, then 32 bits of flags.
	body := []byte{unix.AF_INET, bits, 0, 0, unix.RT_TABLE_LOCAL, unix.RTPROT_KERNEL, unix.RT_SCOPE_HOST, unix.RTN_LOCAL, 0, 0, 0, 0}
	body = appendRtAttr(body, unix.RTA_DST, dst[:])
	body = appendRtAttr(body, unix.RTA_PREFSRC, []byte{127, 0, 0, 1})
	body = appendRtAttr(body, unix.RTA_OIF, binary.NativeEndian.AppendUint32(nil, uint32(ifindex)))
	body = appendRtAttr(body, unix.RTA_METRICS, appendRtAttr(nil, unix.RTAX_CC_ALGO, append([]byte(cc), 0)))
	msg := binary.NativeEndian.AppendUint32(nil, uint32(unix.SizeofNlMsghdr+len(body)))
	msg = binary.NativeEndian.AppendUint16(msg, unix.RTM_NEWROUTE)
	msg = binary.NativeEndian.AppendUint16(msg, unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_REPLACE)
	msg = binary.NativeEndian.AppendUint32(msg, seq)
	msg = binary.NativeEndian.AppendUint32(msg, 0)
	return append(msg, body...)
}

// appendRtAttr appends a route attribute, padded to 4 bytes.
func appendRtAttr(b []byte, typ uint16, data []byte) []byte {
	b = binary.NativeEndian.AppendUint16(b, uint16(unix.SizeofRtAttr+len(data)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, data...)
	for len(b)%unix.NLMSG_ALIGNTO != 0 {
		b = append(b, 0)
	}
	return b
}

// netlinkAck reads the kernel's answer to request seq: nil, or its error.
func netlinkAck(fd int, seq uint32) error {
	buf := make([]byte, 8192)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.Header.Seq != seq || m.Header.Type != unix.NLMSG_ERROR {
				continue
			}
			if len(m.Data) < 4 {
				return fmt.Errorf("short netlink answer")
			}
			if errno := int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
				return syscall.Errno(-errno)
			}
			return nil
		}
	}
}
