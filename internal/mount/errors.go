package mount

import (
	"context"
	"errors"
	"io/fs"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"sitebox/internal/store"
	"sitebox/internal/store/errno"
)

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// unreachable reports whether err says the server could not be reached
// or did not answer within the client's time (--timeout).
func unreachable(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// errno is the status for err; every refusal and failure but "no such
// file" is logged with its reason, since the program that sees EACCES or
// EIO cannot show it.
func (m *fsys) errno(op, p string, v *View, err error) fuse.Status {
	if err == nil {
		return fuse.OK
	}
	e, ok := errno.StoreCodes.CodeOf(err)
	if !ok {
		e = syscall.EIO
	}
	if e != syscall.ENOENT && e != syscall.EINTR {
		who := ""
		if v != nil {
			who = v.Who
		}
		m.log.Warn(op+" refused", "path", p, "errno", e.Error(), "who", who, "reason", err.Error())
	}
	return fuse.Status(e)
}

// refuse logs why the mount itself refuses op and returns errno.
func (m *fsys) refuse(op, p string, errno syscall.Errno, why string) fuse.Status {
	m.log.Warn(op+" refused", "path", p, "errno", errno.Error(), "reason", why)
	return fuse.Status(errno)
}
