package proto

import (
	"context"

	"sitebox/internal/cksum"
	"sitebox/internal/store"
)

// StoreCodes is the one table between store sentinels and kXR error
// codes: the server answers an error with the code of the first row it
// wraps (ServerError when none), the client reads a code back as its
// row's sentinel. Order matters to the server: ErrReadOnly is tested
// before ErrPermission, ErrNameTooLong (an ErrInvalid) before ErrInvalid.
var StoreCodes = store.Codes[int32]{
	{Code: ErrNotFound, Err: store.ErrNotFound},
	{Code: ErrAttrNotFound, Err: store.ErrNoAttr},
	{Code: ErrFileLocked, Err: store.ErrLocked},
	{Code: ErrFSReadOnly, Err: store.ErrReadOnly},
	{Code: ErrNotAuthorized, Err: store.ErrPermission},
	{Code: ErrAuthFailed, Err: store.ErrPermission, Way: store.Reads},
	{Code: ErrIsDirectory, Err: store.ErrIsDir},
	{Code: ErrItExists, Err: store.ErrExist},
	{Code: ErrNoSpace, Err: store.ErrNoSpace},
	{Code: ErrOverQuota, Err: store.ErrNoSpace, Way: store.Reads},
	{Code: ErrUnsupported, Err: cksum.ErrUnknownAlgorithm, Way: store.Sends},
	{Code: ErrUnsupported, Err: store.ErrUnsupported},
	{Code: ErrArgTooLong, Err: store.ErrNameTooLong}, // ENAMETOOLONG in XRootD's mapping
	{Code: ErrArgInvalid, Err: store.ErrInvalid},
	{Code: ErrArgMissing, Err: store.ErrInvalid, Way: store.Reads},
	// XRootD answers ENOTDIR and ENOTEMPTY with kXR_FSError, which says
	// too little to read back; kXR_NotFile is what other servers send
	// for a file where a directory should be.
	{Code: ErrFSError, Err: store.ErrNotDir, Way: store.Sends},
	{Code: ErrFSError, Err: store.ErrNotEmpty, Way: store.Sends},
	{Code: ErrNotFile, Err: store.ErrNotDir, Way: store.Reads},
	{Code: ErrIOError, Err: store.ErrIO},
	{Code: ErrCancelled, Err: context.Canceled, Way: store.Sends},
	{Code: ErrCancelled, Err: context.DeadlineExceeded, Way: store.Sends},
}
