package gsi

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"sitebox/internal/store"
)

// maxChainCerts bounds the certificates parsed from a client; the
// verifier's own limit (x509grid, 12 by default) is below it.
const maxChainCerts = 16

// cert answers step 1001: the client's chosen cipher and digest, its
// public key, its DH value signed with that key, and the main buffer
// encrypted with the session key, holding the server's challenge signed
// with that key, the chain (proxy first) and a new challenge. The
// client holds the key of the chain's end when the key it sent is the
// end's and both signatures verify with it: the challenge is this
// exchange's (so no other session's step can be replayed here) and the
// DH value is the one the session key comes from (so no one in the
// middle substituted theirs).
func (h *Handshake) cert(ctx context.Context, buf *Buffer, p *pending) (Outcome, error) {
	if err := checkChoices(buf); err != nil {
		return Outcome{}, err
	}
	pukPEM, ok := buf.Get(BucketPublicKey)
	if !ok {
		return Outcome{}, errors.New("the client's public key is missing")
	}
	puk, err := parseClientKey(pukPEM)
	if err != nil {
		return Outcome{}, err
	}
	signedDH, ok := buf.Get(BucketCipher)
	if !ok {
		return Outcome{}, errors.New("the client's DH value is missing")
	}
	sealed, ok := buf.Get(BucketMain)
	if !ok {
		return Outcome{}, errors.New("the main buffer is missing")
	}
	var id *store.Identity
	err = h.compute(ctx, func() error {
		chain, err := h.openMain(puk, signedDH, sealed, p)
		if err != nil {
			return err
		}
		id, err = h.srv.cfg.Verify(chain, h.srv.cfg.Now())
		return err
	})
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Identity: id}, nil
}

// openMain derives the session key from the client's signed DH value,
// decrypts the main buffer, checks the signed challenge, and returns
// the client's chain, whose end's key must be puk.
func (h *Handshake) openMain(puk *rsa.PublicKey, signedDH, sealed []byte, p *pending) ([]*x509.Certificate, error) {
	blob, err := recoverRaw(puk, signedDH)
	if err != nil {
		return nil, fmt.Errorf("the client's DH value is not signed with the key it sent: %w", err)
	}
	y, err := h.srv.grp.peerValue(blob)
	if err != nil {
		return nil, fmt.Errorf("the client's DH value: %w", err)
	}
	key, err := p.dh.sessionKey(y, p.padded)
	if err != nil {
		return nil, fmt.Errorf("the client's DH value: %w", err)
	}
	plain, err := decryptBucket(key, sealed)
	clear(key)
	if err != nil {
		return nil, err
	}
	main, err := ParseBuffer(plain)
	if err == nil && main.Protocol != protocolName {
		err = fmt.Errorf("%w: main buffer of protocol %q", ErrMalformed, main.Protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("main buffer: %w", err)
	}
	signedTag, ok := main.Get(BucketSignedTag)
	if !ok {
		return nil, errors.New("the signed random tag is missing")
	}
	if tag, err := recoverRaw(puk, signedTag); err != nil || !equalTag(tag, p.tag) {
		return nil, errors.New("random tag mismatch: the client did not sign this exchange's challenge with the key it sent")
	}
	certs, ok := main.Get(BucketX509)
	if !ok {
		return nil, errors.New("the client's certificate is missing")
	}
	chain, err := parseChain(certs)
	if err != nil {
		return nil, err
	}
	if !sameKey(chain[0], puk) {
		return nil, errors.New("the public key the client sent is not its certificate's (the chain's first, the proxy)")
	}
	return chain, nil
}

// checkChoices checks the cipher and digest the client chose from the
// lists offered; the cipher may name its IV length after '#', which
// must be the 16 bytes AES-CBC uses.
func checkChoices(buf *Buffer) error {
	if c, ok := buf.Get(BucketCipherAlg); ok {
		name, iv, hasIV := strings.Cut(string(c), "#")
		if name != cipherName {
			return fmt.Errorf("unsupported cipher %q chosen by the client (offered: %s)", truncate([]byte(name)), cipherName)
		}
		if n, err := strconv.Atoi(iv); hasIV && (err != nil || n != ivSize) {
			return fmt.Errorf("unsupported IV length %q chosen by the client (%s uses %d)", truncate([]byte(iv)), cipherName, ivSize)
		}
	}
	if d, ok := buf.Get(BucketDigestAlg); ok && string(d) != digestNames {
		return fmt.Errorf("unsupported digest %q chosen by the client (offered: %s)", truncate(d), digestNames)
	}
	return nil
}

// parseChain reads the client's certificates, PEM, as sent: the proxy
// first, then its issuers down to the user's certificate.
func parseChain(data []byte) ([]*x509.Certificate, error) {
	var chain []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("%w: a PEM %q among the client's certificates", ErrMalformed, truncate([]byte(block.Type)))
		}
		if len(chain) == maxChainCerts {
			return nil, fmt.Errorf("%w: more than %d certificates", ErrTooLarge, maxChainCerts)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: certificate %d: %v", ErrMalformed, len(chain), err)
		}
		chain = append(chain, c)
	}
	if len(chain) == 0 {
		return nil, fmt.Errorf("%w: no certificate in the client's bucket", ErrMalformed)
	}
	return chain, nil
}
