package x509grid

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"unicode/utf8"
)

// Names are compared the way OpenSSL (and so xrootd, VOMS and the CA
// directory's file names) compares them: by a canonical encoding in
// which every text value is UTF-8, trimmed, with runs of white space
// made one space and ASCII letters lowered. Two certificates whose raw
// names differ only in string types or case name the same entity, and
// the CA directory's <hash>.0 files are named after the SHA-1 of this
// encoding.

// maxNameRDNs and maxRDNValues bound the work one name may cause; real
// grid names have fewer than ten components.
const (
	maxNameRDNs  = 64
	maxRDNValues = 16
)

// attribute is one type=value of a distinguished name, its value kept
// as encoded (tag and bytes), since the canonical form depends on the
// string type.
type attribute struct {
	oid   asn1.ObjectIdentifier
	tag   int
	value []byte
}

// name is a parsed distinguished name: a sequence of RDNs, each a set of
// attributes (almost always one).
type name [][]attribute

// errName marks a distinguished name that cannot be read.
var errName = errors.New("malformed distinguished name")

// parseName reads the DER of an X.501 Name (a certificate's RawSubject
// or RawIssuer).
func parseName(der []byte) (name, error) {
	var rdns []asn1.RawValue
	rest, err := asn1.Unmarshal(der, &rdns)
	if err != nil || len(rest) != 0 {
		return nil, fmt.Errorf("%w: not a SEQUENCE OF RDN", errName)
	}
	if len(rdns) > maxNameRDNs {
		return nil, fmt.Errorf("%w: more than %d components", errName, maxNameRDNs)
	}
	n := make(name, 0, len(rdns))
	for _, r := range rdns {
		if r.Class != asn1.ClassUniversal || r.Tag != asn1.TagSet || !r.IsCompound {
			return nil, fmt.Errorf("%w: a component is not a SET", errName)
		}
		set, err := parseRDN(r.Bytes)
		if err != nil {
			return nil, err
		}
		n = append(n, set)
	}
	return n, nil
}

func parseRDN(b []byte) ([]attribute, error) {
	var set []attribute
	for len(b) > 0 {
		if len(set) == maxRDNValues {
			return nil, fmt.Errorf("%w: a component has more than %d values", errName, maxRDNValues)
		}
		var atv struct {
			Type  asn1.ObjectIdentifier
			Value asn1.RawValue
		}
		rest, err := asn1.Unmarshal(b, &atv)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errName, err)
		}
		if atv.Value.Class != asn1.ClassUniversal || atv.Value.IsCompound {
			return nil, fmt.Errorf("%w: a value of %v is not a string", errName, atv.Type)
		}
		set = append(set, attribute{oid: atv.Type, tag: atv.Value.Tag, value: atv.Value.Bytes})
		b = rest
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("%w: an empty component", errName)
	}
	return set, nil
}

// canonical is OpenSSL's canonical encoding of n: each RDN as a DER SET
// of SEQUENCE {type, value}, values of the text types turned into
// canonical UTF8Strings, the SETs concatenated with no outer SEQUENCE.
func (n name) canonical() ([]byte, error) {
	var out []byte
	for _, rdn := range n {
		entries := make([][]byte, 0, len(rdn))
		for _, a := range rdn {
			tag, val, err := canonicalValue(a.tag, a.value)
			if err != nil {
				return nil, fmt.Errorf("%w: %v: %v", errName, a.oid, err)
			}
			oid, err := asn1.Marshal(a.oid)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", errName, err)
			}
			entry := appendTLV(nil, asn1.TagSequence|0x20, append(oid, appendTLV(nil, byte(tag), val)...))
			entries = append(entries, entry)
		}
		// DER orders the members of a SET by their encodings.
		sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i], entries[j]) < 0 })
		out = appendTLV(out, asn1.TagSet|0x20, bytes.Join(entries, nil))
	}
	return out, nil
}

// The string types OpenSSL canonicalises (ASN1_MASK_CANON); values of
// any other type are compared as encoded.
const (
	tagUTF8      = 12
	tagPrintable = 19
	tagT61       = 20
	tagIA5       = 22
	tagVisible   = 26
	tagUniversal = 28
	tagBMP       = 30
)

func canonicalValue(tag int, v []byte) (int, []byte, error) {
	var text []byte
	switch tag {
	case tagUTF8:
		if !utf8.Valid(v) {
			return 0, nil, errors.New("invalid UTF-8")
		}
		text = v
	case tagPrintable, tagT61, tagIA5, tagVisible:
		// One byte per character, as Latin-1.
		for _, c := range v {
			text = utf8.AppendRune(text, rune(c))
		}
	case tagBMP, tagUniversal:
		var err error
		if text, err = wideToUTF8(tag, v); err != nil {
			return 0, nil, err
		}
	default:
		return tag, v, nil
	}
	return tagUTF8, foldText(text), nil
}

// wideToUTF8 decodes a BMPString (UCS-2) or UniversalString (UCS-4).
func wideToUTF8(tag int, v []byte) ([]byte, error) {
	width := 2
	if tag == tagUniversal {
		width = 4
	}
	if len(v)%width != 0 {
		return nil, errors.New("truncated wide string")
	}
	var out []byte
	for i := 0; i < len(v); i += width {
		var r rune
		if width == 2 {
			r = rune(binary.BigEndian.Uint16(v[i:]))
		} else {
			r = rune(binary.BigEndian.Uint32(v[i:]))
		}
		if !utf8.ValidRune(r) {
			return nil, errors.New("invalid character in wide string")
		}
		out = utf8.AppendRune(out, r)
	}
	return out, nil
}

// foldText trims ASCII white space, makes each inner run of it one
// space and lowers ASCII letters; other bytes pass unchanged.
func foldText(s []byte) []byte {
	out := make([]byte, 0, len(s))
	s = bytes.TrimFunc(s, isASCIISpace)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isASCIISpace(rune(c)):
			out = append(out, ' ')
			for i+1 < len(s) && isASCIISpace(rune(s[i+1])) {
				i++
			}
		case 'A' <= c && c <= 'Z':
			out = append(out, c+'a'-'A')
		default:
			out = append(out, c)
		}
	}
	return out
}

func isASCIISpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// appendTLV appends a DER tag-length-value with a one-byte tag.
func appendTLV(dst []byte, tag byte, content []byte) []byte {
	dst = append(dst, tag)
	n := len(content)
	switch {
	case n < 0x80:
		dst = append(dst, byte(n))
	default:
		var lb []byte
		for ; n > 0; n >>= 8 {
			lb = append([]byte{byte(n)}, lb...)
		}
		dst = append(dst, 0x80|byte(len(lb)))
		dst = append(dst, lb...)
	}
	return append(dst, content...)
}

// SubjectHash is OpenSSL's subject name hash (X509_NAME_hash, what
// `openssl x509 -hash` prints and the CA directory's "<hash>.0" files are
// named after): the first four bytes of the SHA-1 of the name's
// canonical encoding, read little-endian. rawName is a certificate's
// RawSubject or RawIssuer.
func SubjectHash(rawName []byte) (uint32, error) {
	n, err := parseName(rawName)
	if err != nil {
		return 0, err
	}
	c, err := n.canonical()
	if err != nil {
		return 0, err
	}
	sum := sha1.Sum(c)
	return binary.LittleEndian.Uint32(sum[:4]), nil
}

// SubjectHashOld is OpenSSL's hash of before 1.0 (X509_NAME_hash_old,
// `openssl x509 -subject_hash_old`): the first four bytes of the MD5 of
// the name's DER, read little-endian. CA directories keep links under
// both hashes, and xrootd's gsi names CAs by both.
func SubjectHashOld(rawName []byte) uint32 {
	sum := md5.Sum(rawName)
	return binary.LittleEndian.Uint32(sum[:4])
}

// canonicalKey is the canonical encoding of a raw name as a map key.
func canonicalKey(rawName []byte) (string, error) {
	n, err := parseName(rawName)
	if err != nil {
		return "", err
	}
	c, err := n.canonical()
	return string(c), err
}

// sameName reports whether two raw names name the same entity.
func sameName(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ka, err1 := canonicalKey(a)
	kb, err2 := canonicalKey(b)
	return err1 == nil && err2 == nil && ka == kb
}

// lastIsSingleCN reports whether n's last RDN is one commonName, and
// returns its value: the component a proxy adds to its issuer's name.
func (n name) lastIsSingleCN() (string, bool) {
	if len(n) == 0 || len(n[len(n)-1]) != 1 {
		return "", false
	}
	a := n[len(n)-1][0]
	if a.oid.String() != "2.5.4.3" {
		return "", false
	}
	return string(a.value), true
}
