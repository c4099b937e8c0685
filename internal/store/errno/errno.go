// Package errno is the one table between store sentinels and the errno
// values of a local filesystem: the origin reads the errnos its disks
// answer as sentinels (ErrOf); a filesystem mount answers the programs
// using it with the errnos of sentinels (CodeOf, the Sends rows included).
package errno

import (
	"context"
	"syscall"

	"sitebox/internal/store"
)

// StoreCodes pairs errnos with sentinels, in the order an error that
// wraps several is tested (a too-long name is an ErrInvalid too). Disks
// answer a few errnos the store has no sentinel of its own for (EPERM,
// EDQUOT, EXDEV, ELOOP); they are read as the nearest one. ENOTSUP and
// EBUSY from a disk are read as i/o errors, as before, since the origin
// recognises the ones it expects (xattrs) where it makes the call.
var StoreCodes = store.Codes[syscall.Errno]{
	// First: a request the kernel interrupted (the calling program took
	// a signal) is EINTR, so the program's call is restarted, however
	// the client reported the cancelled request (an https client says
	// "i/o error: ...: context canceled"). As EIO, a Go program's ls
	// failed when the runtime's preemption signal hit it mid-call.
	{Code: syscall.EINTR, Err: context.Canceled, Way: store.Sends},
	{Code: syscall.ENOENT, Err: store.ErrNotFound},
	{Code: syscall.ENAMETOOLONG, Err: store.ErrNameTooLong},
	{Code: syscall.EACCES, Err: store.ErrPermission},
	{Code: syscall.EPERM, Err: store.ErrPermission, Way: store.Reads},
	{Code: syscall.EEXIST, Err: store.ErrExist},
	{Code: syscall.EISDIR, Err: store.ErrIsDir},
	{Code: syscall.ENOTDIR, Err: store.ErrNotDir},
	{Code: syscall.ENOTEMPTY, Err: store.ErrNotEmpty},
	{Code: syscall.EROFS, Err: store.ErrReadOnly},
	{Code: syscall.ENOSPC, Err: store.ErrNoSpace},
	{Code: syscall.EDQUOT, Err: store.ErrNoSpace, Way: store.Reads},
	{Code: syscall.ENOTSUP, Err: store.ErrUnsupported, Way: store.Sends},
	{Code: syscall.EXDEV, Err: store.ErrUnsupported, Way: store.Reads},
	{Code: syscall.EBUSY, Err: store.ErrBusy, Way: store.Sends},
	{Code: syscall.EINVAL, Err: store.ErrInvalid},
	{Code: syscall.ELOOP, Err: store.ErrInvalid, Way: store.Reads},
	{Code: syscall.EIO, Err: store.ErrIO},
}
