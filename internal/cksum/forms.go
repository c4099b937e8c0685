package cksum

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// digestLen is the length in bytes of each algorithm's digest.
func digestLen(algo string) int {
	if algo == MD5 {
		return 16
	}
	return 4
}

// Hex checks a sum another server sent in hex (a kXR_query checksum
// answer) and returns it in Compute's form. XRootD servers may drop the
// leading zeros of a 32-bit sum.
func Hex(algo, value string) (string, error) {
	value = strings.ToLower(strings.TrimSpace(value))
	if algo != MD5 {
		v, err := strconv.ParseUint(value, 16, 32)
		if err != nil {
			return "", fmt.Errorf("%s sum %q is not 8 hex digits", algo, value)
		}
		return Format(uint32(v)), nil
	}
	if b, err := hex.DecodeString(value); err != nil || len(b) != digestLen(algo) {
		return "", fmt.Errorf("%s sum %q is not 32 hex digits", algo, value)
	}
	return value, nil
}

// DigestValue is a sum in Compute's form as an RFC 3230 Digest header
// gives it: md5 in base64 (RFC 1864), adler32 and crc32c in hex, as
// XrdHttp and dCache send them.
func DigestValue(algo, sum string) string {
	if algo != MD5 {
		return sum
	}
	b, err := hex.DecodeString(sum)
	if err != nil {
		return sum
	}
	return base64.StdEncoding.EncodeToString(b)
}

// FromDigest reads a Digest header's value for algo back into Compute's
// form: md5 from base64 (or hex, which some servers send), the 32-bit
// sums from hex.
func FromDigest(algo, value string) (string, error) {
	value = strings.TrimSpace(value)
	if algo == MD5 {
		if b, err := base64.StdEncoding.DecodeString(value); err == nil && len(b) == digestLen(algo) {
			return hex.EncodeToString(b), nil
		}
	}
	return Hex(algo, value)
}
