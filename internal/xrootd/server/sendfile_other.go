//go:build !linux

package server

import (
	"errors"
	"net"
	"time"
)

// sendfileOK reports whether this platform sends reads with sendfile(2);
// elsewhere reads go through pooled buffers.
const sendfileOK = false

func sendfile(*net.TCPConn, func(), []byte, int, int64, int) error {
	return errors.New("sendfile is only used on Linux")
}
