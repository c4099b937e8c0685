package gsi

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// certReq answers step 1000, the client's request for the server's
// certificate: its version, crypto module, CA hashes and delegation
// options, and inside an unencrypted main buffer its challenge. The
// answer (2001) carries the challenge signed with the host key, a new
// challenge, the server's DH value signed with the host key (a key of
// the last few seconds, dhshare.go), the cipher and digest lists, and
// the host certificate. Delegation options are read
// past: the server never asks for a proxy (step 2002), so a client that
// would forward one simply finishes after step 1001.
func (h *Handshake) certReq(ctx context.Context, buf *Buffer) (Outcome, error) {
	padded, err := clientVersion(buf)
	if err != nil {
		return Outcome{}, err
	}
	hashes, ok := buf.Get(BucketIssuerHash)
	if !ok {
		return Outcome{}, errors.New("the client's CA hash is missing")
	}
	if err := h.srv.checkCA(string(hashes)); err != nil {
		return Outcome{}, err
	}
	main, err := mainBuffer(buf)
	if err != nil {
		return Outcome{}, err
	}
	clientTag, ok := main.Get(BucketRandomTag)
	if !ok || !validTag(clientTag) {
		return Outcome{}, fmt.Errorf("malformed random tag (%d bytes): refused to sign (a challenge is %d characters of [A-Za-z0-9./])", len(clientTag), tagLen)
	}
	p := &pending{padded: padded}
	var signedTag, signedDH []byte
	err = h.compute(ctx, func() error {
		var err error
		if p.tag, err = newTag(); err != nil {
			return err
		}
		if signedTag, err = signRaw(h.srv.cfg.Key, clientTag); err != nil {
			return err
		}
		share, err := h.srv.dhShareAt(h.srv.cfg.Now())
		if err != nil {
			return err
		}
		p.dh, signedDH = share.key, share.signed
		return nil
	})
	if err != nil {
		return Outcome{}, fmt.Errorf("answer the certificate request: %w", err)
	}
	inner := &Buffer{Protocol: protocolName, Step: StepServerCert}
	inner.Add(BucketSignedTag, signedTag)
	inner.Add(BucketRandomTag, p.tag)
	reply := &Buffer{Protocol: protocolName, Step: StepServerCert}
	reply.Add(BucketCryptoMod, []byte("ssl"))
	reply.Add(BucketMain, inner.Marshal())
	reply.Add(BucketCipher, signedDH)
	reply.Add(BucketCipherAlg, []byte(cipherName))
	reply.Add(BucketDigestAlg, []byte(digestNames))
	reply.Add(BucketX509, h.srv.certPEM)
	p.sent = h.srv.cfg.Now()
	h.pending = p
	return Outcome{Reply: reply.Marshal()}, nil
}

// clientVersion reads the client's version (absent: this server's, as
// xrootd assumes) and crypto modules: "ssl", "sslnopad" for a client
// whose DH secret is not padded, or a '|' list of modules.
func clientVersion(buf *Buffer) (padded bool, err error) {
	version := int32(Version)
	if v, ok, err := buf.Int32(BucketVersion); err != nil {
		return false, err
	} else if ok {
		version = v
	}
	if version < versionSignedDH {
		return false, fmt.Errorf("the client speaks gsi version %d: version %d or later is needed (signed DH values)", version, versionSignedDH)
	}
	mods, ok := buf.Get(BucketCryptoMod)
	if !ok {
		return false, errors.New("the client's crypto module is missing")
	}
	for _, m := range strings.Split(string(mods), "|") {
		switch m {
		case "ssl":
			return true, nil
		case "sslnopad":
			return false, nil
		}
	}
	return false, fmt.Errorf("crypto module %q is not supported (only ssl)", truncate(mods))
}

// mainBuffer parses the buffer nested in a step's main bucket.
func mainBuffer(buf *Buffer) (*Buffer, error) {
	data, ok := buf.Get(BucketMain)
	if !ok {
		return nil, errors.New("the main buffer is missing")
	}
	main, err := ParseBuffer(data)
	if err != nil {
		return nil, fmt.Errorf("main buffer: %w", err)
	}
	if main.Protocol != protocolName {
		return nil, fmt.Errorf("%w: main buffer of protocol %q", ErrMalformed, main.Protocol)
	}
	return main, nil
}

// maxCAHashes bounds the CA hash list a client may send.
const maxCAHashes = 256

// checkCA asks KnownCA about the client's CA hashes ("h.0|o.0"); a
// hash may come without its ".0", as XRootD allows.
func (s *Server) checkCA(list string) error {
	if s.cfg.KnownCA == nil {
		return nil
	}
	if len(list) > maxCAHashes {
		return fmt.Errorf("%w: a CA hash list of %d bytes", ErrMalformed, len(list))
	}
	for _, h := range strings.Split(list, "|") {
		if !strings.Contains(h, ".") {
			h += ".0"
		}
		if validCAHash(h) && s.cfg.KnownCA(h) {
			return nil
		}
	}
	return fmt.Errorf("unknown CA: cannot verify client credentials (CA %q is not in the CA directory)", truncate([]byte(list)))
}

// validCAHash accepts "<8 hex digits>.<digit>", the only names a CA
// directory's certificates have, so a hash is safe to look up as a file.
func validCAHash(h string) bool {
	if len(h) != 10 || h[8] != '.' || h[9] < '0' || h[9] > '9' {
		return false
	}
	for _, c := range h[:8] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// truncate keeps a client's string short and printable for a message.
func truncate(b []byte) string {
	const most = 64
	if len(b) > most {
		b = b[:most]
	}
	return strings.ToValidUTF8(string(b), "?")
}
