package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

var _ store.Attributer = (*FS)(nil)

// Attrs sends q as a kXR_fattr request on name: a cache answers its
// clients' attribute reads with the origin's.
func (f *FS) Attrs(ctx context.Context, name string, q store.AttrQuery) ([]store.Attr, error) {
	op := q.Op.String()
	if err := q.Check(); err != nil {
		return nil, pathOp(op, name, err)
	}
	var body [16]byte
	body[4], body[5] = byte(q.Op), byte(len(q.Attrs))
	switch {
	case q.Op == store.AttrList:
		body[6] = 0x10 // aData: the values too
	case q.Op == store.AttrSet && q.Exclusive:
		body[6] = 0x01 // isNew
	}
	r, err := newPathReq(op, proto.ReqFattr, body, name)
	if err != nil {
		return nil, err
	}
	r.tail = append([]byte{0}, encodeAttrs(q)...)
	resp, _, err := f.do(ctx, r)
	if err != nil {
		return nil, pathOp(op, r.path, err)
	}
	attrs, err := decodeAttrAnswer(q, resp)
	return attrs, pathOp(op, r.path, err)
}

// encodeAttrs is the name vector (and for a set the value vector).
func encodeAttrs(q store.AttrQuery) []byte {
	var b []byte
	for _, a := range q.Attrs {
		b = append(append(append(b, 0, 0), a.Name...), 0)
	}
	if q.Op == store.AttrSet {
		for _, a := range q.Attrs {
			b = binary.BigEndian.AppendUint32(b, uint32(len(a.Value)))
			b = append(b, a.Value...)
		}
	}
	return b
}

var errBadAttrAnswer = fmt.Errorf("%w: malformed fattr answer", store.ErrIO)

// decodeAttrAnswer reads the answer to q: for a list, names with their
// values; else the error count, the name vector with each name's status
// code and, for a get, the values.
func decodeAttrAnswer(q store.AttrQuery, b []byte) ([]store.Attr, error) {
	var out []store.Attr
	name := func() (string, bool) {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return "", false
		}
		n := string(b[:i])
		b = b[i+1:]
		return n, true
	}
	value := func() ([]byte, bool) {
		if len(b) < 4 {
			return nil, false
		}
		n := int(binary.BigEndian.Uint32(b))
		if n < 0 || n > store.MaxAttrValueLen || len(b)-4 < n {
			return nil, false
		}
		v := bytes.Clone(b[4 : 4+n])
		b = b[4+n:]
		return v, true
	}
	if q.Op == store.AttrList {
		for len(b) > 0 {
			n, ok := name()
			if !ok {
				return nil, errBadAttrAnswer
			}
			v, ok := value()
			if !ok {
				return nil, errBadAttrAnswer
			}
			out = append(out, store.Attr{Name: n, Value: v})
		}
		return out, nil
	}
	if len(b) < 2 || int(b[1]) != len(q.Attrs) {
		return nil, errBadAttrAnswer
	}
	b = b[2:]
	for range q.Attrs {
		if len(b) < 2 {
			return nil, errBadAttrAnswer
		}
		rc := int32(binary.BigEndian.Uint16(b))
		b = b[2:]
		n, ok := name()
		if !ok {
			return nil, errBadAttrAnswer
		}
		a := store.Attr{Name: n}
		if rc != 0 {
			a.Err = &Error{Code: rc, Msg: "attribute " + n}
		}
		out = append(out, a)
	}
	if q.Op == store.AttrGet {
		for i := range out {
			v, ok := value()
			if !ok {
				return nil, errBadAttrAnswer
			}
			out[i].Value = v
		}
	}
	if len(b) != 0 {
		return nil, errBadAttrAnswer
	}
	return out, nil
}
