// Package davstatus is the one table between store sentinels and the HTTP
// statuses of WebDAV answers, read by sitebox's https:// server (error to
// status) and its client of other https:// servers (status to error).
package davstatus

import (
	"net/http"

	"sitebox/internal/cksum"
	"sitebox/internal/store"
)

// StoreCodes pairs statuses with sentinels. The server answers an error
// with the status of the first row it wraps, in this order (ErrDown
// before ErrUnavailable, which a director's answer wraps too); the client
// reads a status back as its row's sentinel. HTTP has one status, 409
// Conflict, for several sentinels, and XrdHttp, dCache and EOS answer with
// statuses sitebox does not send: those rows go one way only.
var StoreCodes = store.Codes[int]{
	{Code: http.StatusNotFound, Err: store.ErrNotFound},
	{Code: http.StatusForbidden, Err: store.ErrPermission},
	{Code: http.StatusUnauthorized, Err: store.ErrPermission, Way: store.Reads},
	{Code: http.StatusForbidden, Err: store.ErrReadOnly, Way: store.Sends},
	{Code: http.StatusPreconditionFailed, Err: store.ErrExist},
	{Code: http.StatusMethodNotAllowed, Err: store.ErrExist, Way: store.Reads}, // MKCOL of an existing name
	{Code: http.StatusConflict, Err: store.ErrExist, Way: store.Reads},
	{Code: http.StatusLocked, Err: store.ErrLocked, Way: store.Sends}, // another client is writing the file, as XrdHttp answers
	{Code: http.StatusConflict, Err: store.ErrIsDir, Way: store.Sends},
	{Code: http.StatusConflict, Err: store.ErrNotDir, Way: store.Sends},
	{Code: http.StatusConflict, Err: store.ErrNotEmpty, Way: store.Sends},
	{Code: http.StatusBadRequest, Err: store.ErrInvalid},
	{Code: http.StatusInsufficientStorage, Err: store.ErrNoSpace},
	{Code: http.StatusNotImplemented, Err: store.ErrUnsupported},
	{Code: http.StatusNotImplemented, Err: cksum.ErrUnknownAlgorithm, Way: store.Sends},
	{Code: http.StatusServiceUnavailable, Err: store.ErrDown, Way: store.Sends}, // a director's answer, naming the server
	{Code: http.StatusBadGateway, Err: store.ErrUnavailable},
	{Code: http.StatusServiceUnavailable, Err: store.ErrUnavailable, Way: store.Reads},
	{Code: http.StatusGatewayTimeout, Err: store.ErrUnavailable, Way: store.Reads},
}
