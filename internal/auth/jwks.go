package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// maxDocSize bounds a discovery document or JWKS read from an issuer.
const maxDocSize = 1 << 20

// minRSABits refuses RSA keys too short to trust.
const minRSABits = 2048

// jwk is one usable verification key of an issuer.
type jwk struct {
	kid string
	alg string // the JWK's "alg", "" when it does not say
	key any    // *rsa.PublicKey or *ecdsa.PublicKey (P-256)
}

// fits returns the key if it can check a token signed with alg.
func (k jwk) fits(iss, alg string) (any, error) {
	if !keyFits(k.key, alg) || k.alg != "" && k.alg != alg {
		return nil, deny("token algorithm %s does not match key %q of issuer %q", alg, k.kid, iss)
	}
	return k.key, nil
}

// fetch loads the issuer's keys: from its JWKS file, its JWKS URL, or the
// jwks_uri its discovery document names.
func (is *issuer) fetch(ctx context.Context) ([]jwk, error) {
	if is.cfg.JWKSFile != "" {
		b, err := os.ReadFile(is.cfg.JWKSFile)
		if err != nil {
			return nil, fmt.Errorf("read JWKS file: %w", err)
		}
		return parseJWKS(b)
	}
	u := is.cfg.JWKSURL
	if u == "" {
		var doc struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		disc := strings.TrimSuffix(is.cfg.Issuer, "/") + DiscoveryPath
		if err := is.getJSON(ctx, disc, &doc); err != nil {
			return nil, err
		}
		if strings.TrimSuffix(doc.Issuer, "/") != strings.TrimSuffix(is.cfg.Issuer, "/") {
			return nil, fmt.Errorf("discovery document %s names issuer %q", disc, doc.Issuer)
		}
		if !strings.HasPrefix(doc.JWKSURI, "https://") {
			return nil, fmt.Errorf("discovery document %s: jwks_uri %q is not https", disc, doc.JWKSURI)
		}
		u = doc.JWKSURI
	}
	b, err := is.get(ctx, u)
	if err != nil {
		return nil, err
	}
	return parseJWKS(b)
}

// getJSON GETs u and decodes its JSON body into v.
func (is *issuer) getJSON(ctx context.Context, u string, v any) error {
	b, err := is.get(ctx, u)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("GET %s: bad JSON: %w", u, err)
	}
	return nil
}

// get GETs u, requiring 200 and at most maxDocSize bytes.
func (is *issuer) get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := is.v.cfg.HTTPClient.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // we name the URL ourselves
		}
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDocSize+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if len(b) > maxDocSize {
		return nil, fmt.Errorf("GET %s: answer over %d bytes", u, maxDocSize)
	}
	return b, nil
}

// jwkJSON is one key of a JWKS (RFC 7517, 7518) as sent.
type jwkJSON struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS returns the RSA and P-256 signing keys of a JWKS. Keys of
// other kinds are skipped (an issuer may publish encryption keys too);
// a set with no usable key at all is an error naming why each failed.
func parseJWKS(b []byte) ([]jwk, error) {
	var set struct {
		Keys []jwkJSON `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("parse JWKS: %w", err)
	}
	if len(set.Keys) == 0 {
		return nil, errors.New("parse JWKS: no keys")
	}
	var keys []jwk
	var skipped []string
	for i, j := range set.Keys {
		k, err := j.parse()
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d (kid %q): %v", i, j.Kid, err))
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("parse JWKS: no usable key: %s", strings.Join(skipped, "; "))
	}
	return keys, nil
}

func (j jwkJSON) parse() (jwk, error) {
	if j.Use != "" && j.Use != "sig" {
		return jwk{}, fmt.Errorf("use %q is not sig", j.Use)
	}
	k := jwk{kid: j.Kid, alg: j.Alg}
	switch j.Kty {
	case "RSA":
		n, err1 := b64Int(j.N)
		e, err2 := b64Int(j.E)
		if err := errors.Join(err1, err2); err != nil {
			return jwk{}, fmt.Errorf("RSA key: %w", err)
		}
		if n.BitLen() < minRSABits {
			return jwk{}, fmt.Errorf("RSA key of %d bits, under %d", n.BitLen(), minRSABits)
		}
		if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
			return jwk{}, errors.New("RSA key: bad exponent")
		}
		k.key = &rsa.PublicKey{N: n, E: int(e.Int64())}
	case "EC":
		if j.Crv != "P-256" {
			return jwk{}, fmt.Errorf("EC curve %q is not supported (only P-256)", j.Crv)
		}
		x, err1 := b64Fixed(j.X, 32)
		y, err2 := b64Fixed(j.Y, 32)
		if err := errors.Join(err1, err2); err != nil {
			return jwk{}, fmt.Errorf("EC key: %w", err)
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return jwk{}, fmt.Errorf("EC key: %w", err)
		}
		k.key = pub
	default:
		return jwk{}, fmt.Errorf("key type %q is not supported", j.Kty)
	}
	return k, nil
}

func b64Int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("bad base64url number %.20q", s)
	}
	return new(big.Int).SetBytes(b), nil
}

// b64Fixed decodes an EC coordinate, left-padding to size bytes (some
// encoders drop leading zeros).
func b64Fixed(s string, size int) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 || len(b) > size {
		return nil, fmt.Errorf("bad base64url coordinate %.20q", s)
	}
	return append(make([]byte, size-len(b)), b...), nil
}
