package gsi

import (
	"bytes"
	"crypto/rand"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
)

// modp3072Hex is the prime of RFC 3526's 3072-bit MODP group (generator
// 2). XRootD ≤ 5.5 servers generate 512-bit parameters and ≥ 5.6 use a
// fixed 3072-bit group of their own; clients of both lines take any
// parameters the server sends, and OpenSSL 3 knows this group by name,
// so its parameter check (which XrdCl runs on every handshake) costs
// nothing. A safe prime: its only small subgroup is {1, p-1}, which the
// check of the peer's value excludes.
const modp3072Hex = "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD1" +
	"29024E088A67CC74020BBEA63B139B22514A08798E3404DD" +
	"EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245" +
	"E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED" +
	"EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3D" +
	"C2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F" +
	"83655D23DCA3AD961C62F356208552BB9ED529077096966D" +
	"670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B" +
	"E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9" +
	"DE2BCBF6955817183995497CEA956AE515D2261898FA0510" +
	"15728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64" +
	"ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7" +
	"ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6B" +
	"F12FFA06D98A0864D87602733EC86A64521F2B18177B200C" +
	"BBE117577A615D6C770988C0BAD946E208E24FA074E5AB31" +
	"43DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF"

// dhExponentBits is the size of the private exponent: twice the
// group's 128-bit strength and more (NIST SP 800-56A's minimum for
// safe-prime groups is 256). Its top bit is always set, so every
// exponentiation takes the same number of steps.
const dhExponentBits = 320

// The markers around the public value in XRootD's DH blob.
const (
	dhPubBegin = "---BPUB---"
	dhPubEnd   = "---EPUB---"
)

// dhGroup is the fixed group with its PEM "DH PARAMETERS" (PKCS #3), as
// OpenSSL writes them at the head of every blob.
type dhGroup struct {
	p, g *big.Int
	pem  []byte
}

func newDHGroup() *dhGroup {
	p, _ := new(big.Int).SetString(modp3072Hex, 16)
	g := big.NewInt(2)
	der, err := asn1.Marshal(struct{ P, G *big.Int }{p, g})
	if err != nil {
		panic("gsi: encode the DH parameters: " + err.Error()) // constant input
	}
	return &dhGroup{p: p, g: g, pem: pem.EncodeToMemory(&pem.Block{Type: "DH PARAMETERS", Bytes: der})}
}

// size is the byte length of p, to which shared secrets are padded.
func (grp *dhGroup) size() int { return (grp.p.BitLen() + 7) / 8 }

// dhKey is one side's key: a client's serves one exchange, a server's
// the exchanges of a few seconds (dhshare.go).
//
// math/big is not constant-time. Go's Montgomery exponentiation does the
// same sequence of multiplications whatever the exponent's bits (a fixed
// 4-bit window, zero windows included), as golang.org/x/crypto/ssh relies
// on for its DH key exchanges, but its reductions depend on the data. So
// the private exponent never meets a base the peer chose: the shared
// secret is computed on a blinded base (blindedExp), and the public value
// is g's power, which no one chooses.
type dhKey struct {
	grp  *dhGroup
	x, y *big.Int
}

func (grp *dhGroup) generate(rand io.Reader) (*dhKey, error) {
	buf := make([]byte, dhExponentBits/8)
	if _, err := io.ReadFull(rand, buf); err != nil {
		return nil, fmt.Errorf("DH key: %w", err)
	}
	buf[0] |= 0x80
	x := new(big.Int).SetBytes(buf)
	clear(buf)
	return &dhKey{grp: grp, x: x, y: new(big.Int).Exp(grp.g, x, grp.p)}, nil
}

// blob is the public part as XRootD exchanges it: the parameters' PEM,
// then the public value in upper-case hex between markers.
func (k *dhKey) blob() []byte {
	var b bytes.Buffer
	b.Write(k.grp.pem)
	b.WriteString(dhPubBegin)
	b.WriteString(strings.ToUpper(k.y.Text(16)))
	b.WriteString(dhPubEnd)
	return b.Bytes()
}

var errDHValue = errors.New("the DH public value is out of range")

// peerValue reads the other side's public value from its blob. The
// parameters at the blob's head are not read: a peer that used others
// computes another secret, and the first decryption fails. XRootD's
// reader stops at "---EPUB--" (one dash short), so that is what ends
// the value here too.
func (grp *dhGroup) peerValue(blob []byte) (*big.Int, error) {
	_, rest, ok := bytes.Cut(blob, []byte(dhPubBegin))
	if !ok {
		return nil, fmt.Errorf("%w: no %s marker in the DH value", ErrMalformed, dhPubBegin)
	}
	hex, _, ok := bytes.Cut(rest, []byte(dhPubEnd[:len(dhPubEnd)-1]))
	if !ok {
		return nil, fmt.Errorf("%w: no %s marker in the DH value", ErrMalformed, dhPubEnd)
	}
	if len(hex) == 0 || len(hex) > 2*grp.size()+2 {
		return nil, fmt.Errorf("%w: a DH value of %d hex digits", ErrMalformed, len(hex))
	}
	for _, c := range hex {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return nil, fmt.Errorf("%w: the DH value is not hexadecimal", ErrMalformed)
		}
	}
	y, _ := new(big.Int).SetString(string(hex), 16)
	// 1 < y < p-1: neither the identity nor the element of order 2.
	if y.Cmp(big.NewInt(1)) <= 0 || y.Cmp(new(big.Int).Sub(grp.p, big.NewInt(1))) >= 0 {
		return nil, errDHValue
	}
	return y, nil
}

// sessionKey is the AES-128 key both sides derive: the first 16 bytes
// of the shared secret, which is left-padded with zeros to the size of
// p when padded (XRootD ≥ 10400 without "nopad"), else written without
// leading zeros, as OpenSSL derives it in either mode.
func (k *dhKey) sessionKey(peer *big.Int, padded bool) ([]byte, error) {
	z, err := k.blindedExp(peer)
	if err != nil {
		return nil, err
	}
	var secret []byte
	if padded {
		secret = z.FillBytes(make([]byte, k.grp.size()))
	} else {
		secret = z.Bytes()
	}
	forgetInt(z)
	defer clear(secret)
	if len(secret) < aesKeySize {
		return nil, errDHValue
	}
	return bytes.Clone(secret[:aesKeySize]), nil
}

// dhBlindBits is the size of the random exponent that blinds a peer's
// value: the base the private exponent meets is unpredictable to the
// peer, and making and removing the blind costs two short powers.
const dhBlindBits = 128

// blindedExp is y^x computed as (y·g^r)^x · Y^-r (Y = g^x), which are
// equal for every y, with a fresh random r: a peer sending chosen values
// many times to one server key cannot correlate what it sent with the
// timing of the exponentiation that uses the secret.
func (k *dhKey) blindedExp(y *big.Int) (*big.Int, error) {
	p := k.grp.p
	rb := make([]byte, dhBlindBits/8)
	if _, err := io.ReadFull(rand.Reader, rb); err != nil {
		return nil, fmt.Errorf("DH blind: %w", err)
	}
	r := new(big.Int).SetBytes(rb)
	base := new(big.Int).Exp(k.grp.g, r, p)
	base.Mul(base, y).Mod(base, p)
	z := new(big.Int).Exp(base, k.x, p)
	unblind := new(big.Int).Exp(k.y, r, p)
	if unblind.ModInverse(unblind, p) == nil {
		return nil, errDHValue // p is prime and Y is not 0: cannot happen
	}
	return z.Mul(z, unblind).Mod(z, p), nil
}

// forget wipes the private exponent once the session key is derived.
func (k *dhKey) forget() { forgetInt(k.x) }

// forgetInt overwrites a secret number's words.
func forgetInt(v *big.Int) {
	clear(v.Bits())
	v.SetInt64(0)
}
