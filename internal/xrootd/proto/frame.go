package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// RequestHeaderLen is the fixed size of every client request header.
const RequestHeaderLen = 24

// ResponseHeaderLen is the fixed size of every server response header.
const ResponseHeaderLen = 8

// ErrFrameTooLarge reports a request whose declared payload exceeds the limit
// the reader was given; the connection cannot be resynchronised after it.
var ErrFrameTooLarge = errors.New("xrootd: request payload too large")

// StreamID identifies one in-flight request on a connection; the server
// echoes it so a client can match responses arriving out of order.
type StreamID [2]byte

// Request is one decoded client request: the 24-byte header and its payload.
type Request struct {
	Stream StreamID
	ID     uint16
	Body   [16]byte // request-specific parameters
	Data   []byte   // payload of Dlen bytes
}

// Name returns the request's protocol name, for logs and errors.
func (r *Request) Name() string { return RequestName(r.ID) }

// U16 returns the big-endian uint16 at body offset off.
func (r *Request) U16(off int) uint16 { return binary.BigEndian.Uint16(r.Body[off:]) }

// U32 returns the big-endian uint32 at body offset off.
func (r *Request) U32(off int) uint32 { return binary.BigEndian.Uint32(r.Body[off:]) }

// I64 returns the big-endian int64 at body offset off.
func (r *Request) I64(off int) int64 { return int64(binary.BigEndian.Uint64(r.Body[off:])) }

// Handle returns the 4-byte file handle at body offset off.
func (r *Request) Handle(off int) [4]byte {
	var h [4]byte
	copy(h[:], r.Body[off:off+4])
	return h
}

// ReadRequest reads one request from r. Payloads larger than maxData are
// rejected with ErrFrameTooLarge before any allocation, so a hostile length
// cannot exhaust memory. A short read returns io.ErrUnexpectedEOF.
func ReadRequest(r io.Reader, maxData int) (*Request, error) {
	var hdr [RequestHeaderLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	req := &Request{ID: binary.BigEndian.Uint16(hdr[2:4])}
	copy(req.Stream[:], hdr[0:2])
	copy(req.Body[:], hdr[4:20])
	dlen := int32(binary.BigEndian.Uint32(hdr[20:24]))
	if dlen < 0 {
		return req, fmt.Errorf("%w: negative length %d for %s", ErrFrameTooLarge, dlen, req.Name())
	}
	if int64(dlen) > int64(maxData) {
		return req, fmt.Errorf("%w: %d bytes for %s (limit %d)", ErrFrameTooLarge, dlen, req.Name(), maxData)
	}
	if dlen > 0 {
		req.Data = make([]byte, dlen)
		if _, err := io.ReadFull(r, req.Data); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return req, err
		}
	}
	return req, nil
}

// EncodeRequest serialises a request (header followed by payload).
func EncodeRequest(stream StreamID, id uint16, body [16]byte, data []byte) []byte {
	b := make([]byte, RequestHeaderLen+len(data))
	copy(b[0:2], stream[:])
	binary.BigEndian.PutUint16(b[2:4], id)
	copy(b[4:20], body[:])
	binary.BigEndian.PutUint32(b[20:24], uint32(len(data)))
	copy(b[24:], data)
	return b
}

// ResponseHeader is the 8-byte header preceding every server response.
type ResponseHeader struct {
	Stream StreamID
	Status uint16
	Dlen   int32
}

// PutResponseHeader writes h into b[0:8].
func PutResponseHeader(b []byte, h ResponseHeader) {
	copy(b[0:2], h.Stream[:])
	binary.BigEndian.PutUint16(b[2:4], h.Status)
	binary.BigEndian.PutUint32(b[4:8], uint32(h.Dlen))
}

// ParseResponseHeader decodes b[0:8].
func ParseResponseHeader(b []byte) ResponseHeader {
	var h ResponseHeader
	copy(h.Stream[:], b[0:2])
	h.Status = binary.BigEndian.Uint16(b[2:4])
	h.Dlen = int32(binary.BigEndian.Uint32(b[4:8]))
	return h
}

// ReadResponse reads one response frame (header and body) from r, rejecting
// bodies larger than maxData.
func ReadResponse(r io.Reader, maxData int) (ResponseHeader, []byte, error) {
	h, err := ReadResponseHeader(r, maxData)
	if err != nil {
		return h, nil, err
	}
	body, err := ReadResponseBody(r, make([]byte, h.Dlen))
	return h, body, err
}

// ReadResponseHeader reads a response frame's header from r, rejecting
// bodies larger than maxData; the caller reads the body (ReadResponseBody),
// into a buffer of its choosing.
func ReadResponseHeader(r io.Reader, maxData int) (ResponseHeader, error) {
	var hb [ResponseHeaderLen]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		return ResponseHeader{}, err
	}
	h := ParseResponseHeader(hb[:])
	if h.Dlen < 0 || int64(h.Dlen) > int64(maxData) {
		return h, fmt.Errorf("%w: response of %d bytes (limit %d)", ErrFrameTooLarge, h.Dlen, maxData)
	}
	return h, nil
}

// ReadResponseBody fills body, a frame's whole body, from r.
func ReadResponseBody(r io.Reader, body []byte) ([]byte, error) {
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

// ReadListElem is one element of a kXR_readv request's read_list.
type ReadListElem struct {
	Handle [4]byte
	Len    int32
	Offset int64
}

// ParseReadList decodes a kXR_readv payload.
func ParseReadList(data []byte) ([]ReadListElem, error) { return parseList("readv", data) }

// ParseWriteList decodes a kXR_writev request's write_list: elements of
// the same 16 bytes as a read_list's (handle, length, offset), at most
// WritevMaxElems of them. The data follows the request, outside its dlen.
func ParseWriteList(data []byte) ([]ReadListElem, error) { return parseList("writev", data) }

func parseList(what string, data []byte) ([]ReadListElem, error) {
	if len(data)%ReadvElemLen != 0 {
		return nil, fmt.Errorf("%s list of %d bytes is not a multiple of %d", what, len(data), ReadvElemLen)
	}
	n := len(data) / ReadvElemLen
	if n > ReadvMaxElems {
		return nil, fmt.Errorf("%s with %d elements exceeds the limit of %d", what, n, ReadvMaxElems)
	}
	out := make([]ReadListElem, n)
	for i := range out {
		e := data[i*ReadvElemLen:]
		copy(out[i].Handle[:], e[0:4])
		out[i].Len = int32(binary.BigEndian.Uint32(e[4:8]))
		out[i].Offset = int64(binary.BigEndian.Uint64(e[8:16]))
	}
	return out, nil
}

// PutReadListElem encodes e into b[0:16] (also the layout of each readv
// response element's header).
func PutReadListElem(b []byte, e ReadListElem) {
	copy(b[0:4], e.Handle[:])
	binary.BigEndian.PutUint32(b[4:8], uint32(e.Len))
	binary.BigEndian.PutUint64(b[8:16], uint64(e.Offset))
}
