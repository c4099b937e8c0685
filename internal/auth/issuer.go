package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"sitebox/internal/atomicfile"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
)

// KeyFileName is the site issuer's private key file in its directory.
const KeyFileName = "issuer.key"

// MaxLifetime bounds the lifetime of tokens the site issuer mints: long
// enough for a week-long transfer campaign, short enough that a leaked
// token dies on its own (tokens cannot be revoked).
const MaxLifetime = 7 * 24 * time.Hour

// Issuer mints WLCG-profile tokens signed with the site's ES256 key, and
// serves the discovery document and JWKS that let any Verifier (ours or
// another site's) check them. It is safe for concurrent use.
type Issuer struct {
	url  string
	key  *ecdsa.PrivateKey
	kid  string // RFC 7638 thumbprint of the public key
	jwks []byte
	now  func() time.Time
}

// TokenRequest describes a token to mint.
type TokenRequest struct {
	Subject string
	Groups  []string // "/cms", "/cms/production"
	// Scopes are WLCG storage scopes: "storage.read:/store",
	// "storage.create:/store/user/alice", or without a path for "/".
	Scopes   []string
	Audience []string // default: AnyAudience
	Lifetime time.Duration
}

// GenerateKey creates a new P-256 key in dir/issuer.key (mode 0600),
// refusing to replace an existing one: that would invalidate every token
// already handed out.
func GenerateKey(dir string) (string, error) { return generateKey(dir, false) }

// GenerateKeyForce is GenerateKey replacing an existing key (rotation).
func GenerateKeyForce(dir string) (string, error) { return generateKey(dir, true) }

// generateKey writes the key with atomicfile (created exclusively, or
// replaced with force), so a crash never leaves a partial key and two
// racing generators cannot both win.
func generateKey(dir string, force bool) (string, error) {
	final := filepath.Join(dir, KeyFileName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("generate issuer key: %w", err)
	}
	if !force {
		if _, err := os.Lstat(final); err == nil {
			return "", fmt.Errorf("generate issuer key: %s already exists (use force to replace it)", final)
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("generate issuer key: %w", err)
	}
	data, err := tlsutil.KeyPEM(key)
	if err != nil {
		return "", fmt.Errorf("generate issuer key: %w", err)
	}
	if force {
		err = atomicfile.Write(final, data, 0o600)
	} else if err = atomicfile.Create(final, data, 0o600); errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("generate issuer key: %s already exists (use force to replace it)", final)
	}
	if err != nil {
		return "", fmt.Errorf("generate issuer key: %w", err)
	}
	return final, nil
}

// LoadIssuer reads the P-256 key in keyFile (PKCS#8 or SEC 1 PEM) for the
// issuer issuerURL (an https URL; its tokens' iss). A key file readable
// by group or others is refused, like ssh does.
func LoadIssuer(keyFile, issuerURL string) (*Issuer, error) {
	issuerURL = strings.TrimSuffix(issuerURL, "/")
	if err := checkIssuerURL(issuerURL); err != nil {
		return nil, fmt.Errorf("load issuer: %w", err)
	}
	fi, err := os.Stat(keyFile)
	if err != nil {
		return nil, fmt.Errorf("load issuer: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("load issuer: key %s has mode %v, readable by others: chmod 600 it", keyFile, fi.Mode().Perm())
	}
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("load issuer: %w", err)
	}
	key, err := parseECKey(b)
	if err != nil {
		return nil, fmt.Errorf("load issuer: %s: %w", keyFile, err)
	}
	is := &Issuer{url: issuerURL, key: key, now: time.Now}
	is.kid, is.jwks = thumbprintAndJWKS(&key.PublicKey)
	return is, nil
}

func parseECKey(b []byte) (*ecdsa.PrivateKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("no PEM block")
	}
	var k any
	var err error
	switch blk.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	default:
		return nil, fmt.Errorf("PEM block %q is not a private key", blk.Type)
	}
	if err != nil {
		return nil, err
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, errors.New("key is not an EC P-256 key")
	}
	return ek, nil
}

// URL is the issuer's iss value.
func (is *Issuer) URL() string { return is.url }

// KeyID is the kid the issuer's tokens carry.
func (is *Issuer) KeyID() string { return is.kid }

// JWKS is the issuer's public key set, as served at
// /.well-known/jwks.json (and usable as a Verifier's JWKSFile).
func (is *Issuer) JWKS() []byte { return append([]byte(nil), is.jwks...) }

// Issue mints a token for req after checking it.
func (is *Issuer) Issue(req TokenRequest) (string, error) {
	if req.Subject == "" || strings.ContainsFunc(req.Subject, isCtl) {
		return "", fmt.Errorf("issue token: subject %q must be non-empty printable text", req.Subject)
	}
	if req.Lifetime <= 0 || req.Lifetime > MaxLifetime {
		return "", fmt.Errorf("issue token: lifetime %v must be over 0 and at most %v", req.Lifetime, MaxLifetime)
	}
	for _, s := range req.Scopes {
		if err := checkIssueScope(s); err != nil {
			return "", fmt.Errorf("issue token: %w", err)
		}
	}
	for _, g := range req.Groups {
		if c, err := store.CleanPath(g); err != nil || c != g || g == "/" {
			return "", fmt.Errorf("issue token: group %q must look like /vo or /vo/subgroup", g)
		}
	}
	aud := req.Audience
	if len(aud) == 0 {
		aud = []string{AnyAudience}
	}
	for _, a := range aud {
		if a == "" || strings.ContainsFunc(a, isCtl) {
			return "", fmt.Errorf("issue token: bad audience %q", a)
		}
	}
	var jti [16]byte
	rand.Read(jti[:])
	now := is.now().Truncate(time.Second)
	c := jwt.MapClaims{
		"iss":      is.url,
		"sub":      req.Subject,
		"iat":      now.Unix(),
		"nbf":      now.Unix(),
		"exp":      now.Add(req.Lifetime).Unix(),
		"jti":      hex.EncodeToString(jti[:]),
		"wlcg.ver": "1.0",
	}
	if len(aud) == 1 {
		c["aud"] = aud[0]
	} else {
		c["aud"] = aud
	}
	if len(req.Scopes) > 0 {
		c["scope"] = strings.Join(req.Scopes, " ")
	}
	if len(req.Groups) > 0 {
		c["wlcg.groups"] = req.Groups
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	t.Header["kid"] = is.kid
	s, err := t.SignedString(is.key)
	if err != nil {
		return "", fmt.Errorf("issue token: %w", err)
	}
	return s, nil
}

func isCtl(r rune) bool { return r < 0x20 || r == 0x7f }

// checkIssueScope accepts storage.{read,create,modify,stage}[:/clean/path].
func checkIssueScope(s string) error {
	name, p, hasPath := strings.Cut(s, ":")
	if scopeOps(name, false) == nil {
		return fmt.Errorf("scope %q: want storage.read, storage.create, storage.modify or storage.stage, optionally with :/path", s)
	}
	if hasPath {
		if _, err := joinScopePath("/", p); err != nil {
			return fmt.Errorf("scope %q: %w", s, err)
		}
	}
	return nil
}

// thumbprintAndJWKS computes the RFC 7638 thumbprint of pub (SHA-256 of
// the required members in lexicographic order) and the JWKS holding it.
func thumbprintAndJWKS(pub *ecdsa.PublicKey) (string, []byte) {
	raw, _ := pub.Bytes() // uncompressed point: 0x04 || X || Y
	x := base64.RawURLEncoding.EncodeToString(raw[1:33])
	y := base64.RawURLEncoding.EncodeToString(raw[33:65])
	sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	kid := base64.RawURLEncoding.EncodeToString(sum[:])
	set := map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": kid, "use": "sig", "alg": "ES256",
	}}}
	b, _ := json.Marshal(set)
	return kid, b
}
