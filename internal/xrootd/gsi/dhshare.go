package gsi

import (
	"crypto/rand"
	"fmt"
	"time"
)

// dhShareLifetime is how long the server offers one DH key.
//
// Signing the DH blob takes six RSA operations with a 2048-bit host key
// (the blob is about 1.4 KB, signed 245 bytes at a time), against one
// for the client's challenge: making a key and its signature for every
// certificate request would let anyone cost the server seven RSA
// operations per unauthenticated request. So one key and its signature
// serve every exchange that starts within this time; each exchange still
// has its own challenge, which is what ties a client's second step to
// it (a step recorded in another exchange decrypts here, and is refused
// for its challenge). The key protects only the client's chain and
// signed challenge in transit, public data, and it is safe to reuse:
// the group is a safe prime, whose one small subgroup ({1, p-1}) the
// peer value check excludes, and the private exponent only ever meets
// blinded values (dhKey.blindedExp), so timing many exchanges with it
// teaches a peer nothing.
const dhShareLifetime = 10 * time.Second

// dhShare is a DH key offered to the exchanges of a while, with its
// blob signed by the host key. It is immutable once made; the key lives
// until the last exchange holding it ends.
type dhShare struct {
	key    *dhKey
	signed []byte
	until  time.Time
}

// dhShareAt returns the key to offer at now, making a new one when the
// last has served its time. The caller holds a computing slot: making
// one costs a DH exponentiation and the blob's signature.
func (s *Server) dhShareAt(now time.Time) (*dhShare, error) {
	s.shareMu.Lock()
	defer s.shareMu.Unlock()
	if sh := s.share; sh != nil && now.Before(sh.until) {
		return sh, nil
	}
	key, err := s.grp.generate(rand.Reader)
	if err != nil {
		return nil, err
	}
	signed, err := signRaw(s.cfg.Key, key.blob())
	if err != nil {
		return nil, fmt.Errorf("sign the DH value: %w", err)
	}
	s.share = &dhShare{key: key, signed: signed, until: now.Add(dhShareLifetime)}
	return s.share, nil
}
