package gsi

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ClientConfig is what the client side of the exchange proves itself
// with and whom it trusts.
type ClientConfig struct {
	// Chain is the client's chain, proxy first, down to the user's
	// certificate; Key is the key of its first certificate.
	Chain []*x509.Certificate
	Key   *rsa.PrivateKey
	// Roots are the CAs the server's certificate must chain to, and
	// ServerName the host name (or address) it must be for.
	Roots      *x509.CertPool
	ServerName string
	// WeakDH accepts DH parameters from 512 bits, as xrootd ≤ 5.5
	// servers generate them (XrdCl does); by default a group under 2048
	// bits is refused. A key agreed on such a group can be broken.
	WeakDH bool
}

// Client is the client side of one exchange, as XRootD's XrdSecgsi
// speaks it: Start makes step 1000 from the server's offer, Continue
// answers the server's step 2001 with step 1001. internal/xrootd/client
// runs it when an upstream asks for gsi (the cache's robot proxy, the
// user's in sitebox get); the tests drive it against the box and xrootd.
type Client struct {
	cfg       ClientConfig
	tag       []byte // the challenge sent, which must come back signed
	serverKey *rsa.PublicKey
	digest    string // chosen from the server's list (chooseDigest)
}

// NewClient starts a client exchange.
func NewClient(cfg ClientConfig) (*Client, error) {
	if len(cfg.Chain) == 0 || cfg.Key == nil || cfg.Roots == nil || cfg.ServerName == "" {
		return nil, errors.New("gsi client: a chain, its key, the trusted CAs and the server's name are needed")
	}
	return &Client{cfg: cfg, digest: digestNames}, nil
}

// Start is step 1000 for an offer "gsi,v:…,c:…,ca:…" (the login
// answer's, after "&P=").
func (c *Client) Start(offer string) ([]byte, error) {
	opts := offerOptions(offer)
	if v, _ := strconv.Atoi(opts["v"]); v < versionSignedDH {
		return nil, fmt.Errorf("gsi client: the server speaks version %q; %d or later is needed", opts["v"], versionSignedDH)
	}
	user := c.cfg.Chain[len(c.cfg.Chain)-1]
	hashes, err := IssuerHashes(user)
	if err != nil {
		return nil, fmt.Errorf("gsi client: %w", err)
	}
	if c.tag, err = newTag(); err != nil {
		return nil, err
	}
	main := &Buffer{Protocol: protocolName, Step: StepCertReq}
	main.Add(BucketRandomTag, c.tag)
	out := &Buffer{Protocol: protocolName, Step: StepCertReq}
	out.Add(BucketCryptoMod, []byte("ssl"))
	out.Add(BucketVersion, int32Bucket(Version))
	out.Add(BucketIssuerHash, []byte(hashes))
	out.Add(BucketClientOpts, int32Bucket(0))
	out.Add(BucketMain, main.Marshal())
	return out.Marshal(), nil
}

// offerOptions splits "gsi,v:10600,c:ssl,ca:…" into its options.
func offerOptions(offer string) map[string]string {
	opts := map[string]string{}
	for _, f := range strings.Split(offer, ",") {
		if k, v, ok := strings.Cut(f, ":"); ok {
			opts[k] = v
		}
	}
	return opts
}

// Continue checks the server's step 2001 — its certificate, its
// signature on the client's challenge and on its DH value — and makes
// step 1001.
func (c *Client) Continue(reply []byte) ([]byte, error) {
	buf, err := ParseBuffer(reply)
	if err != nil {
		return nil, fmt.Errorf("gsi client: %w", err)
	}
	if buf.Step != StepServerCert {
		return nil, fmt.Errorf("gsi client: the server answered step %d, not %d", buf.Step, StepServerCert)
	}
	if err := c.checkServer(buf); err != nil {
		return nil, fmt.Errorf("gsi client: %w", err)
	}
	main, err := mainBuffer(buf)
	if err != nil {
		return nil, fmt.Errorf("gsi client: %w", err)
	}
	if st, ok := main.Get(BucketSignedTag); !ok {
		return nil, errors.New("gsi client: the server did not sign the challenge")
	} else if tag, err := recoverRaw(c.serverKey, st); err != nil || !equalTag(tag, c.tag) {
		return nil, errors.New("gsi client: the server's signature on the challenge does not verify")
	}
	serverTag, ok := main.Get(BucketRandomTag)
	if !ok || !validTag(serverTag) {
		return nil, errors.New("gsi client: the server sent no challenge, or a malformed one: refused to sign")
	}
	if c.digest, err = chooseDigest(buf); err != nil {
		return nil, fmt.Errorf("gsi client: %w", err)
	}
	key, blob, err := c.agree(buf)
	if err != nil {
		return nil, fmt.Errorf("gsi client: %w", err)
	}
	defer clear(key)
	return c.certStep(key, blob, serverTag)
}

// chooseDigest picks the message digest from the server's list
// ("sha256", or "sha1" from xrootd 5.5, whose list lacks sha256): the
// server refuses a digest it did not offer. Without delegation the
// digest signs nothing of this exchange.
func chooseDigest(buf *Buffer) (string, error) {
	list, ok := buf.Get(BucketDigestAlg)
	if !ok {
		return digestNames, nil
	}
	offered := strings.Split(string(list), ":")
	for _, want := range []string{"sha256", "sha1"} {
		if slices.Contains(offered, want) {
			return want, nil
		}
	}
	return "", fmt.Errorf("the server offers no digest this client speaks (%.64q)", list)
}

// checkServer verifies the server's certificate for ServerName.
func (c *Client) checkServer(buf *Buffer) error {
	data, ok := buf.Get(BucketX509)
	if !ok {
		return errors.New("the server sent no certificate")
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return errors.New("the server's certificate is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return err
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: c.cfg.Roots, DNSName: c.cfg.ServerName, CurrentTime: time.Now()}); err != nil {
		return fmt.Errorf("the server's certificate: %w", err)
	}
	key, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return errors.New("the server's key is not RSA")
	}
	c.serverKey = key
	return nil
}

// agree reads the server's signed DH value and parameters and derives
// the session key with a key of the client's own on them; blob is the
// client's DH value to send.
func (c *Client) agree(buf *Buffer) (key, blob []byte, err error) {
	signed, ok := buf.Get(BucketCipher)
	if !ok {
		return nil, nil, errors.New("the server sent no DH value")
	}
	peerBlob, err := recoverRaw(c.serverKey, signed)
	if err != nil {
		return nil, nil, fmt.Errorf("the server's DH value: %w", err)
	}
	minBits := 2048
	if c.cfg.WeakDH {
		minBits = 512
	}
	grp, err := parseDHParams(peerBlob, minBits)
	if err != nil {
		return nil, nil, err
	}
	y, err := grp.peerValue(peerBlob)
	if err != nil {
		return nil, nil, err
	}
	dh, err := grp.generate(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	defer dh.forget()
	key, err = dh.sessionKey(y, true)
	return key, dh.blob(), err
}

// parseDHParams reads the PEM "DH PARAMETERS" at a blob's head.
func parseDHParams(blob []byte, minBits int) (*dhGroup, error) {
	block, _ := pem.Decode(blob)
	if block == nil || block.Type != "DH PARAMETERS" {
		return nil, fmt.Errorf("%w: no DH parameters in the server's DH value", ErrMalformed)
	}
	var params struct{ P, G *big.Int }
	if _, err := asn1.Unmarshal(block.Bytes, &params); err != nil {
		return nil, fmt.Errorf("%w: DH parameters: %v", ErrMalformed, err)
	}
	if params.P.BitLen() < minBits || params.P.BitLen() > 8192 || params.G.Cmp(big.NewInt(1)) <= 0 || params.G.Cmp(params.P) >= 0 {
		return nil, fmt.Errorf("DH parameters of %d bits refused (%d to 8192 taken)", params.P.BitLen(), minBits)
	}
	return &dhGroup{p: params.P, g: params.G, pem: pem.EncodeToMemory(block)}, nil
}

// certStep builds step 1001: the choices, the signed DH value and the
// public key in clear; the signed challenge, the chain and a new
// challenge in the main buffer, encrypted with the session key.
func (c *Client) certStep(key, blob, serverTag []byte) ([]byte, error) {
	signedTag, err := signRaw(c.cfg.Key, serverTag)
	if err != nil {
		return nil, err
	}
	signedDH, err := signRaw(c.cfg.Key, blob)
	if err != nil {
		return nil, err
	}
	puk, err := publicKeyPEM(&c.cfg.Key.PublicKey)
	if err != nil {
		return nil, err
	}
	tag, err := newTag()
	if err != nil {
		return nil, err
	}
	var chain []byte
	for _, cert := range c.cfg.Chain {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})...)
	}
	main := &Buffer{Protocol: protocolName, Step: StepCert}
	main.Add(BucketSignedTag, signedTag)
	main.Add(BucketX509, chain)
	main.Add(BucketRandomTag, tag)
	sealed, err := encryptBucket(key, main.Marshal())
	if err != nil {
		return nil, err
	}
	out := &Buffer{Protocol: protocolName, Step: StepCert}
	out.Add(BucketCryptoMod, []byte("ssl"))
	out.Add(BucketMain, sealed)
	out.Add(BucketCipherAlg, []byte(cipherName+"#"+strconv.Itoa(ivSize)))
	out.Add(BucketDigestAlg, []byte(c.digest))
	out.Add(BucketCipher, signedDH)
	out.Add(BucketPublicKey, puk)
	return out.Marshal(), nil
}
