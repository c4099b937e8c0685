package mount

import (
	"context"
	"errors"
	"io/fs"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"sitebox/internal/store"
)

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// errnoTable maps the store's sentinels to what a program asking a local
// filesystem expects; order matters where errors wrap several (a
// too-long name is also invalid).
var errnoTable = []struct {
	err   error
	errno syscall.Errno
}{
	{store.ErrNotFound, syscall.ENOENT},
	{store.ErrNameTooLong, syscall.ENAMETOOLONG},
	{store.ErrPermission, syscall.EACCES},
	{store.ErrExist, syscall.EEXIST},
	{store.ErrIsDir, syscall.EISDIR},
	{store.ErrNotDir, syscall.ENOTDIR},
	{store.ErrNotEmpty, syscall.ENOTEMPTY},
	{store.ErrReadOnly, syscall.EROFS},
	{store.ErrNoSpace, syscall.ENOSPC},
	{store.ErrUnsupported, syscall.ENOTSUP},
	{store.ErrBusy, syscall.EBUSY},
	{store.ErrInvalid, syscall.EINVAL},
	{context.Canceled, syscall.EINTR},
}

// errno is the status for err; every refusal and failure but "no such
// file" is logged with its reason, since the program that sees EACCES or
// EIO cannot show it.
func (m *fsys) errno(op, p string, v *View, err error) fuse.Status {
	if err == nil {
		return fuse.OK
	}
	e := syscall.EIO
	for _, t := range errnoTable {
		if errors.Is(err, t.err) {
			e = t.errno
			break
		}
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
