package gsi

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// BucketType names what a bucket holds (XrdSutAux.hh's kXRS_*).
type BucketType int32

// The bucket types the exchange uses.
const (
	bucketEnd        BucketType = 0    // ends a buffer
	bucketInactive   BucketType = 1    // dropped by XRootD when it writes a buffer
	BucketCryptoMod  BucketType = 3000 // the crypto module ("ssl")
	BucketMain       BucketType = 3001 // a nested buffer, encrypted once there is a session key
	BucketPublicKey  BucketType = 3004 // the client's RSA public key, PEM
	BucketCipher     BucketType = 3005 // a DH public value, signed
	BucketRandomTag  BucketType = 3006 // a challenge for the other side
	BucketSignedTag  BucketType = 3007 // the other side's challenge, signed
	BucketUser       BucketType = 3008 // the login name the client asks for
	BucketMessage    BucketType = 3011 // text for the other side
	BucketVersion    BucketType = 3014 // protocol version, int32
	BucketClientOpts BucketType = 3019 // the client's delegation options, int32
	BucketX509       BucketType = 3022 // certificates, PEM
	BucketIssuerHash BucketType = 3023 // the hashes of the client's CA, "h.0|o.0"
	BucketCipherAlg  BucketType = 3025 // cipher names, ':'-separated; the client's choice "name#ivlen"
	BucketDigestAlg  BucketType = 3026 // digest names, ':'-separated
)

// Limits on what a buffer from a client may hold. Real exchanges use a
// handful of buckets and stay under 16 KiB with a VOMS proxy; the
// ceilings are well above that and keep a hostile client's parse cheap.
const (
	// MaxCredential is the largest kXR_auth credential parsed.
	MaxCredential = 128 << 10
	// maxBuckets is the most buckets one buffer may hold.
	maxBuckets = 32
	// maxProtocolName is XrdSecPROTOIDSIZE: the name and its NUL.
	maxProtocolName = 8
)

// Buffer is XRootD's XrdSutBuffer: a protocol name, a step, and typed
// buckets. On the wire: the name and a NUL, the step (int32, big-endian),
// then per bucket its type and length (int32 each) and its bytes, ended
// by a bucket type 0.
type Buffer struct {
	Protocol string
	Step     int32
	Buckets  []Bucket
}

// Bucket is one typed field of a Buffer.
type Bucket struct {
	Type BucketType
	Data []byte
}

// Errors of the codec, wrapped with where the input went wrong.
var (
	ErrMalformed = errors.New("malformed gsi buffer")
	ErrTooLarge  = errors.New("gsi buffer too large")
)

// ParseBuffer reads a buffer. It is strict where XRootD's parser is
// lenient, since the input comes from an unauthenticated peer: the name
// must be NUL-terminated within 8 bytes, every length must fit what is
// left, the end marker must be there, and a type may appear once (the
// exchange never repeats one; XRootD would silently take the first).
// Inactive buckets, which XRootD never writes, are refused too. Bytes
// after the end marker are ignored, as XRootD ignores them.
func ParseBuffer(b []byte) (*Buffer, error) {
	if len(b) > MaxCredential {
		return nil, fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLarge, len(b), MaxCredential)
	}
	name, rest, err := cutName(b)
	if err != nil {
		return nil, err
	}
	if len(rest) < 4 {
		return nil, fmt.Errorf("%w: no step", ErrMalformed)
	}
	buf := &Buffer{Protocol: name, Step: int32(binary.BigEndian.Uint32(rest))}
	rest = rest[4:]
	seen := map[BucketType]bool{}
	for {
		if len(rest) < 4 {
			return nil, fmt.Errorf("%w: no end marker after %d buckets", ErrMalformed, len(buf.Buckets))
		}
		typ := BucketType(binary.BigEndian.Uint32(rest))
		if typ == bucketEnd {
			return buf, nil
		}
		if len(rest) < 8 {
			return nil, fmt.Errorf("%w: bucket %d has no length", ErrMalformed, typ)
		}
		n := int64(int32(binary.BigEndian.Uint32(rest[4:])))
		rest = rest[8:]
		switch {
		case n < 0 || n > int64(len(rest)):
			return nil, fmt.Errorf("%w: bucket %d claims %d bytes, %d left", ErrMalformed, typ, n, len(rest))
		case typ == bucketInactive || seen[typ]:
			return nil, fmt.Errorf("%w: bucket type %d repeated or inactive", ErrMalformed, typ)
		case len(buf.Buckets) == maxBuckets:
			return nil, fmt.Errorf("%w: more than %d buckets", ErrTooLarge, maxBuckets)
		}
		seen[typ] = true
		buf.Buckets = append(buf.Buckets, Bucket{Type: typ, Data: rest[:n:n]})
		rest = rest[n:]
	}
}

// cutName splits the NUL-terminated protocol name off b.
func cutName(b []byte) (string, []byte, error) {
	for i := 0; i < len(b) && i < maxProtocolName; i++ {
		if b[i] == 0 {
			if i == 0 {
				return "", nil, fmt.Errorf("%w: empty protocol name", ErrMalformed)
			}
			return string(b[:i]), b[i+1:], nil
		}
	}
	return "", nil, fmt.Errorf("%w: no NUL-terminated protocol name in the first %d bytes", ErrMalformed, maxProtocolName)
}

// Marshal writes the buffer in the wire form ParseBuffer reads.
func (b *Buffer) Marshal() []byte {
	n := len(b.Protocol) + 1 + 4 + 4
	for _, k := range b.Buckets {
		n += 8 + len(k.Data)
	}
	out := make([]byte, 0, n)
	out = append(out, b.Protocol...)
	out = append(out, 0)
	out = binary.BigEndian.AppendUint32(out, uint32(b.Step))
	for _, k := range b.Buckets {
		out = binary.BigEndian.AppendUint32(out, uint32(k.Type))
		out = binary.BigEndian.AppendUint32(out, uint32(len(k.Data)))
		out = append(out, k.Data...)
	}
	return binary.BigEndian.AppendUint32(out, uint32(bucketEnd))
}

// Get returns the data of the bucket of type t.
func (b *Buffer) Get(t BucketType) ([]byte, bool) {
	for _, k := range b.Buckets {
		if k.Type == t {
			return k.Data, true
		}
	}
	return nil, false
}

// Add appends a bucket.
func (b *Buffer) Add(t BucketType, data []byte) {
	b.Buckets = append(b.Buckets, Bucket{Type: t, Data: data})
}

// Int32 reads the bucket of type t as a big-endian int32; ok is false
// when there is none, an error says it has another size.
func (b *Buffer) Int32(t BucketType) (v int32, ok bool, err error) {
	d, ok := b.Get(t)
	if !ok {
		return 0, false, nil
	}
	if len(d) != 4 {
		return 0, true, fmt.Errorf("%w: bucket %d holds %d bytes, not an int32", ErrMalformed, t, len(d))
	}
	return int32(binary.BigEndian.Uint32(d)), true, nil
}

// int32Bucket encodes v as XRootD's MarshalBucket does.
func int32Bucket(v int32) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(v))
}
