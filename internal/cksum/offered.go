package cksum

import (
	"fmt"
	"slices"
	"strings"
)

// Offered is the set of algorithms a box computes for its clients.
// adler32 (XRootD's and FTS's default) and crc32c are cheap enough to
// compute on any request and are always offered; md5, several times
// slower, only where the operator configures it, as xrootd computes
// only the algorithms its xrootd.chksum names. The zero value offers
// adler32 and crc32c.
type Offered struct {
	extra []string
}

// NewOffered offers adler32, crc32c and the algorithms named in extra
// ("md5"). A name that is no known algorithm is an error.
func NewOffered(extra []string) (Offered, error) {
	var o Offered
	for _, a := range extra {
		algo, err := Normalize(a)
		if err != nil || strings.TrimSpace(a) == "" {
			return Offered{}, fmt.Errorf("%q is not a checksum algorithm (use %q; %s and %s are always offered)", a, MD5, Adler32, CRC32C)
		}
		if algo != Adler32 && algo != CRC32C && !slices.Contains(o.extra, algo) {
			o.extra = append(o.extra, algo)
		}
	}
	return o, nil
}

// Has reports whether algo (canonical) is offered.
func (o Offered) Has(algo string) bool {
	return algo == Adler32 || algo == CRC32C || slices.Contains(o.extra, algo)
}

// Names lists the offered algorithms, the default first.
func (o Offered) Names() []string {
	return append([]string{Adler32, CRC32C}, o.extra...)
}

// Refusal is the error for a known algorithm that is not offered.
func (o Offered) Refusal(algo string) error {
	return fmt.Errorf("%s checksums are not offered by this server (it offers %s)", algo, strings.Join(o.Names(), ", "))
}
