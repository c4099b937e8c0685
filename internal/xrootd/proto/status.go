package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// DecodeRequestHeader decodes a 24-byte request header, leaving the payload
// of dlen bytes on the wire for the caller, which may stream it (the server
// does so for writes) instead of buffering it whole as ReadRequest does.
func DecodeRequestHeader(b []byte) (req Request, dlen int32) {
	copy(req.Stream[:], b[0:2])
	req.ID = binary.BigEndian.Uint16(b[2:4])
	copy(req.Body[:], b[4:20])
	return req, int32(binary.BigEndian.Uint32(b[20:24]))
}

// StatusPrefixLen is the size of a kXR_status frame before its info part:
// the response header and ServerResponseBody_Status.
const StatusPrefixLen = ResponseHeaderLen + StatusBodyLen

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C is the Castagnoli CRC that pgread, pgwrite and kXR_status use.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// PutStatus fills b[0:StatusPrefixLen+len(info)] with a kXR_status frame
// prefix: the response header (whose dlen counts the status body and info
// only), the status body and info. dataLen is the length of the data that
// follows info on the wire; it travels in the status body. The body's CRC32C
// covers everything after itself up to the end of info, as XRootD computes it.
func PutStatus(b []byte, stream StreamID, reqID uint16, respType byte, info []byte, dataLen int) []byte {
	n := StatusPrefixLen + len(info)
	b = b[:n]
	PutResponseHeader(b, ResponseHeader{Stream: stream, Status: StatusStatus, Dlen: int32(StatusBodyLen + len(info))})
	body := b[ResponseHeaderLen:]
	copy(body[4:6], stream[:])
	body[6] = byte(reqID - ReqAuth)
	body[7] = respType
	clear(body[8:12])
	binary.BigEndian.PutUint32(body[12:16], uint32(dataLen))
	copy(body[16:], info)
	binary.BigEndian.PutUint32(body[0:4], CRC32C(body[4:n-ResponseHeaderLen]))
	return b
}

// StatusBody is a decoded ServerResponseBody_Status.
type StatusBody struct {
	CRC      uint32
	Stream   StreamID
	ReqID    uint16 // the full request ID (kXR_pgread, …)
	RespType byte
	DataLen  int32
}

// ParseStatus decodes the status body at the start of a kXR_status
// response body (after the 8-byte header) and checks its CRC over the
// status body and the info bytes that follow it.
func ParseStatus(body []byte) (StatusBody, []byte, error) {
	if len(body) < StatusBodyLen {
		return StatusBody{}, nil, fmt.Errorf("kXR_status body of %d bytes is shorter than %d", len(body), StatusBodyLen)
	}
	var s StatusBody
	s.CRC = binary.BigEndian.Uint32(body[0:4])
	copy(s.Stream[:], body[4:6])
	s.ReqID = uint16(body[6]) + ReqAuth
	s.RespType = body[7]
	s.DataLen = int32(binary.BigEndian.Uint32(body[12:16]))
	if got := CRC32C(body[4:]); got != s.CRC {
		return s, nil, fmt.Errorf("kXR_status CRC mismatch: got %08x, want %08x", got, s.CRC)
	}
	return s, body[StatusBodyLen:], nil
}

// PgPages returns how many CRC32C pages cover n bytes at offset off: the
// first runs from off to the next 4 KiB boundary, the rest are whole pages
// but the last.
func PgPages(off int64, n int) int {
	if n <= 0 {
		return 0
	}
	first := PgPageSize - int(off%PgPageSize)
	if first >= n {
		return 1
	}
	n -= first
	return 1 + (n+PgPageSize-1)/PgPageSize
}

// ErrPgLayout reports a pgwrite payload whose length cannot be split into
// CRC32C-prefixed pages for its offset.
var ErrPgLayout = errors.New("pgwrite payload layout is invalid")

// PgwriteDataLen checks the layout of a pgwrite payload of dlen bytes at
// file offset off — units of a 4-byte CRC32C followed by the page's data,
// the first page running to the next 4 KiB boundary — and returns the
// number of data bytes it carries.
func PgwriteDataLen(off int64, dlen int) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%w: negative offset %d", ErrPgLayout, off)
	}
	if dlen <= 4 {
		return 0, fmt.Errorf("%w: %d bytes cannot hold a checksum and data", ErrPgLayout, dlen)
	}
	first := PgPageSize - int(off%PgPageSize)
	if dlen <= 4+first {
		return dlen - 4, nil
	}
	rest := dlen - 4 - first
	full, frag := rest/PgUnitSize, rest%PgUnitSize
	if frag != 0 && frag <= 4 {
		return 0, fmt.Errorf("%w: last page of %d bytes has no data after its checksum", ErrPgLayout, frag)
	}
	data := first + full*PgPageSize
	if frag != 0 {
		data += frag - 4
	}
	return data, nil
}
