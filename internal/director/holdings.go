package director

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/bits"

	"sitebox/internal/store"
)

// Holdings summarises the names a data server holds, so a director can
// ask first the few servers that may hold a file instead of all of them:
// a Bloom filter, sent in the server's advertisements. It only orders a
// search. A server whose filter says no is still asked when no server it
// points to holds the file (the filter is older than the file), and one
// whose filter says yes is still asked before any client goes there, so
// a wrong or hostile filter costs questions, never a wrong redirect.
type Holdings struct {
	// Bits is the filter, a power of two of bits. It is left out of an
	// ad when the director already has the filter of this Digest (see
	// HoldingsSender): ads stay small while the holdings do not change.
	Bits   []byte `json:"bits,omitempty"`
	Hashes int    `json:"k"`      // bits set per name
	Names  int    `json:"n"`      // names put in
	Digest string `json:"digest"` // of Hashes and Bits
}

// Bounds of a filter. At about 10 bits per name one name in a hundred
// that a server does not hold gets it asked. A server with more names
// than maxHoldingsBits allows sends no filter and is asked for every
// file, as without filters.
const (
	minHoldingsBits = 512
	maxHoldingsBits = 1 << 19 // 64 KiB: 54,000 names
	bitsPerName     = 9.6
	maxHashes       = 16
	// MaxHoldingsNames is the most names a filter is built for.
	MaxHoldingsNames = maxHoldingsBits * 10 / 96
)

// holdingsKey is what a name's filter bits derive from: two 64-bit
// hashes, combined as in Kirsch and Mitzenmacher's double hashing.
type holdingsKey struct{ h1, h2 uint64 }

func keyOf(name string) holdingsKey {
	sum := sha256.Sum256([]byte(name))
	return holdingsKey{binary.LittleEndian.Uint64(sum[0:8]), binary.LittleEndian.Uint64(sum[8:16]) | 1}
}

// NewHoldings builds the filter of names; nil if they are more than
// MaxHoldingsNames.
func NewHoldings(names []string) *Holdings {
	if len(names) > MaxHoldingsNames {
		return nil
	}
	n := max(len(names), 1)
	m := uint64(minHoldingsBits)
	for float64(m) < float64(n)*bitsPerName && m < maxHoldingsBits {
		m <<= 1
	}
	k := int(math.Round(float64(m) / float64(n) * math.Ln2))
	k = min(max(k, 1), maxHashes)
	h := &Holdings{Bits: make([]byte, m/8), Hashes: k, Names: len(names)}
	for _, name := range names {
		key := keyOf(name)
		for i := range uint64(k) {
			b := (key.h1 + i*key.h2) & (m - 1)
			h.Bits[b/8] |= 1 << (b % 8)
		}
	}
	h.Digest = h.digest()
	return h
}

func (h *Holdings) digest() string {
	d := sha256.New()
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], uint64(h.Hashes))
	d.Write(k[:])
	d.Write(h.Bits)
	return hex.EncodeToString(d.Sum(nil)[:16])
}

// usable says whether h can answer for a name: it has its bits.
func (h *Holdings) usable() bool { return h != nil && len(h.Bits) > 0 }

// mayHold says whether the server may hold the name of key: false only
// if it did not when its filter was built.
func (h *Holdings) mayHold(key holdingsKey) bool {
	mask := uint64(len(h.Bits))*8 - 1
	for i := range uint64(h.Hashes) {
		b := (key.h1 + i*key.h2) & mask
		if h.Bits[b/8]&(1<<(b%8)) == 0 {
			return false
		}
	}
	return true
}

// check refuses a malformed filter: one that would make the director
// index out of its bits or spend more than a filter's bound on it.
func (h *Holdings) check() error {
	if h == nil {
		return nil
	}
	if h.Hashes < 1 || h.Hashes > maxHashes {
		return fmt.Errorf("%w: holdings: %d hashes (1 to %d)", store.ErrInvalid, h.Hashes, maxHashes)
	}
	if len(h.Digest) != 32 {
		return fmt.Errorf("%w: holdings: digest %q is not 32 hex digits", store.ErrInvalid, abbrev(h.Digest, 40))
	}
	if len(h.Bits) == 0 {
		return nil // the director has it, or does without
	}
	m := len(h.Bits) * 8
	if m < minHoldingsBits || m > maxHoldingsBits || bits.OnesCount(uint(m)) != 1 {
		return fmt.Errorf("%w: holdings: %d bits (a power of two from %d to %d)", store.ErrInvalid, m, minHoldingsBits, maxHoldingsBits)
	}
	if h.digest() != h.Digest {
		return fmt.Errorf("%w: holdings: the bits do not match their digest", store.ErrInvalid)
	}
	return nil
}

// summary is h without its bits, for listings: the federation view says
// a server sends a filter, not what is in it.
func (h *Holdings) summary() *Holdings {
	if h == nil {
		return nil
	}
	return &Holdings{Hashes: h.Hashes, Names: h.Names, Digest: h.Digest}
}
