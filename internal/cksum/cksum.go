// Package cksum computes whole-file checksums in the forms XRootD and
// HTTP Digest clients expect, and keeps them with the file so each is
// computed once per version of the file.
package cksum

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"strings"
)

// Supported algorithm names, as clients spell them (xrdcp --cksum
// adler32:source, Want-Digest: crc32c).
const (
	Adler32 = "adler32"
	CRC32C  = "crc32c"
	MD5     = "md5"
)

// Default is the algorithm used when a client names none, as in XRootD.
const Default = Adler32

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrUnknownAlgorithm is returned for algorithms sitebox does not compute.
var ErrUnknownAlgorithm = fmt.Errorf("unknown checksum algorithm (known: %s, %s, %s)", Adler32, CRC32C, MD5)

// Normalize returns the canonical lower-case name of algo, or an error
// wrapping ErrUnknownAlgorithm. A known algorithm need not be offered:
// see Offered.
func Normalize(algo string) (string, error) {
	switch a := strings.ToLower(strings.TrimSpace(algo)); a {
	case Adler32, CRC32C, MD5:
		return a, nil
	case "":
		return Default, nil
	default:
		return "", fmt.Errorf("%q: %w", algo, ErrUnknownAlgorithm)
	}
}

// New returns a fresh hash for a canonical algorithm name.
func New(algo string) (hash.Hash, error) {
	switch algo {
	case Adler32:
		return NewAdler32(), nil
	case CRC32C:
		return crc32.New(castagnoli), nil
	case MD5:
		return md5.New(), nil
	}
	return nil, fmt.Errorf("%q: %w", algo, ErrUnknownAlgorithm)
}

// Format renders a 32-bit sum the way XRootD prints it: 8 lower-case hex
// digits, zero padded.
func Format(sum uint32) string { return fmt.Sprintf("%08x", sum) }

// Compute reads r to the end and returns the formatted checksum: the
// digest in lower-case hex, 8 digits for the 32-bit sums, 32 for md5.
func Compute(r io.Reader, algo string) (string, error) {
	algo, err := Normalize(algo)
	if err != nil {
		return "", err
	}
	h, err := New(algo)
	if err != nil {
		return "", err
	}
	buf := make([]byte, 1<<20)
	if _, err := io.CopyBuffer(h, r, buf); err != nil {
		return "", fmt.Errorf("checksum %s: %w", algo, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CRC32COf returns the Castagnoli CRC of b, as used per page by pgread and
// pgwrite and per block by the cache.
func CRC32COf(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// UpdateCRC32C continues a Castagnoli CRC over b.
func UpdateCRC32C(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }

// adlerMod is adler32's modulus, the largest prime below 2^16.
const adlerMod = 65521

// Adler32Combine returns the adler32 of A followed by B from the adler32
// of A (a), that of B (b) and B's length: pieces of a file summed apart
// (the chunks of a copy, written by several streams in any order) give
// the whole file's sum without reading it again. (zlib's
// adler32_combine.)
func Adler32Combine(a, b uint32, lenB int64) uint32 {
	rem := uint32(lenB % adlerMod)
	s1 := a & 0xffff
	s2 := (rem * s1) % adlerMod
	s1 += (b & 0xffff) + adlerMod - 1
	s2 += (a >> 16) + (b >> 16) + adlerMod - rem
	if s1 >= adlerMod {
		s1 -= adlerMod
	}
	if s1 >= adlerMod {
		s1 -= adlerMod
	}
	if s2 >= adlerMod<<1 {
		s2 -= adlerMod << 1
	}
	if s2 >= adlerMod {
		s2 -= adlerMod
	}
	return s1 | s2<<16
}
