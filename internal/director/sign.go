package director

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"sitebox/internal/tlsutil"
)

// An advertisement is signed with the box's federation key. The headers
// carry the member name (to find its key), a sequence number and the
// signature over both and the exact body bytes. The sequence is the
// signing time in nanoseconds, so one number is both the timestamp (the
// director refuses one more than MaxClockSkew off its clock) and a value
// that only grows (the director refuses one not after the last it
// accepted from that member): a captured advertisement cannot be
// replayed, and a restarted box needs no saved counter.
const (
	HeaderMember    = "Sitebox-Member"
	HeaderSeq       = "Sitebox-Seq"
	HeaderSignature = "Sitebox-Signature"
)

// MaxClockSkew is how far an advertisement's time may be from the
// director's clock.
const MaxClockSkew = 2 * time.Minute

// adMessage is what is signed: a context string (so the signature is no
// use for anything else), the member, the sequence and the body.
func adMessage(member string, seq int64, body []byte) []byte {
	msg := []byte("sitebox-ad/1\n" + member + "\n" + strconv.FormatInt(seq, 10) + "\n")
	return append(msg, body...)
}

// Signer signs a box's advertisements. It is safe for concurrent use.
type Signer struct {
	Member string
	Key    ed25519.PrivateKey

	mu   sync.Mutex
	last int64
}

// Sign sets the signature headers of an advertisement with this body.
func (s *Signer) Sign(h http.Header, body []byte) {
	s.mu.Lock()
	seq := time.Now().UnixNano()
	if seq <= s.last { // two ads in one clock tick, or the clock stepped back
		seq = s.last + 1
	}
	s.last = seq
	s.mu.Unlock()
	h.Set(HeaderMember, s.Member)
	h.Set(HeaderSeq, strconv.FormatInt(seq, 10))
	h.Set(HeaderSignature, base64.StdEncoding.EncodeToString(ed25519.Sign(s.Key, adMessage(s.Member, seq, body))))
}

// KeyFile is where a box with this state dir keeps its federation key.
func KeyFile(stateDir string) string { return filepath.Join(stateDir, "federation", "key.pem") }

// LoadOrCreateKey reads the box's federation key, making it (mode 0600,
// in a 0700 directory) on first use. A key file others may read is
// refused: whoever reads it can advertise as this box (make a new key
// with `sitebox federation join` if it leaked).
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	return tlsutil.LoadOrCreateKey(path, "federation key", func() (ed25519.PrivateKey, error) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		return priv, err
	})
}
