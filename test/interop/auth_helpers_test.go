package interop

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"sitebox/test/peers"
)

// issuerNode is a box that is its own token issuer ([auth] site_issuer):
// its key is made with `sitebox token keygen` before it starts.
type issuerNode struct {
	*fedNode
	issuer string // its tokens' iss
	key    *ecdsa.PrivateKey
	kid    string
}

func startIssuerNode(t *testing.T, name, site, conf string) *issuerNode {
	t.Helper()
	return startIssuerNodeVOs(t, name, site, nil, conf)
}

// startIssuerNodeVOs is startIssuerNode with the VOs the box trusts its
// own issuer for ([auth] site_issuer_vos): the groups of its tokens in
// other VOs are ignored.
func startIssuerNodeVOs(t *testing.T, name, site string, vos []string, conf string) *issuerNode {
	t.Helper()
	return prepareNode(t, 0).startIssuer(t, name, site, vos, conf)
}

// startIssuer starts a site-issuer node on the ports spec chose, for a
// config that names them.
func (spec nodeSpec) startIssuer(t *testing.T, name, site string, vos []string, conf string) *issuerNode {
	t.Helper()
	run(t, false, siteboxBin, "token", "keygen", "--state-dir", spec.state)
	iss := spec.httpsURL()
	auth := "[auth]\nsite_issuer = true\nissuer_url = \"" + iss + "\"\n"
	if len(vos) > 0 {
		auth += "site_issuer_vos = [\"" + strings.Join(vos, "\", \"") + "\"]\n"
	}
	n := spec.start(t, name, site, auth+conf)
	in := &issuerNode{fedNode: n, issuer: iss}
	pemBytes, err := os.ReadFile(filepath.Join(spec.state, "issuer", "issuer.key"))
	if err != nil {
		t.Fatal(err)
	}
	if in.key, err = jwt.ParseECPrivateKeyFromPEM(pemBytes); err != nil {
		t.Fatal(err)
	}
	// The kid the box publishes, from a token it issued.
	hdr, _, _ := strings.Cut(in.token(t, "probe", "", "storage.read:/"), ".")
	var h struct{ Kid string }
	b, _ := base64.RawURLEncoding.DecodeString(hdr)
	json.Unmarshal(b, &h)
	in.kid = h.Kid
	return in
}

// token asks the box's CLI for a token (subject, groups, scopes; the
// lists comma-separated).
func (n *issuerNode) token(t *testing.T, sub, groups, scopes string) string {
	t.Helper()
	// Stdout only: the CLI warns on stderr about groups the box ignores.
	cmd := exec.Command(siteboxBin, "token", "issue", "--config", filepath.Join(n.state, "sitebox.toml"), "--sub", sub, "--groups", groups, "--scope", scopes, "--lifetime", "1h")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sitebox token issue: %v: %s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// forge signs claims with the issuer's own key (or key, when given) and
// header alg, for tokens the CLI refuses to make: expired, not yet valid,
// another issuer.
func (n *issuerNode) forge(t *testing.T, claims jwt.MapClaims, key *ecdsa.PrivateKey) string {
	t.Helper()
	if key == nil {
		key = n.key
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"] = n.kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// claims are a valid token's claims for sub with scope, changed by edit.
func (n *issuerNode) claims(sub, groups, scope string, edit func(jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": n.issuer, "sub": sub, "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"wlcg.ver": "1.0", "scope": scope, "aud": "https://wlcg.cern.ch/jwt/v1/any", "jti": "t"}
	if groups != "" {
		c["wlcg.groups"] = strings.Split(groups, ",")
	}
	if edit != nil {
		edit(c)
	}
	return c
}

func otherKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// algNone is a token claiming no signature.
func algNone(claims jwt.MapClaims) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	b, _ := json.Marshal(claims)
	return h + "." + base64.RawURLEncoding.EncodeToString(b) + "."
}

// certDir is an OpenSSL hashed CA directory holding the boxes'
// certificates, as XrdCl wants for roots:// (X509_CERT_DIR).
func certDir(t *testing.T, nodes ...*fedNode) string {
	t.Helper()
	peers.Require(t, "openssl")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	for i, n := range nodes {
		b, err := os.ReadFile(n.certFile)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "box"+string(rune('a'+i))+".pem"), b, 0o644)
	}
	if out, err := exec.Command("openssl", "rehash", dir).CombinedOutput(); err != nil {
		t.Fatalf("openssl rehash: %v: %s", err, out)
	}
	return dir
}

// xrdEnv is the environment for xrdcp with a token (empty: none) and the
// CA directory.
func xrdEnv(caDir, token string) []string {
	// An empty BEARER_TOKEN is skipped by XrdCl, so no token is sent.
	return []string{"X509_CERT_DIR=" + caDir, "BEARER_TOKEN=" + token}
}

// foreignIssuer is a token issuer another box trusts through a JWKS file:
// its tokens are forged here with its key.
type foreignIssuer struct {
	url, jwks string
	key       *ecdsa.PrivateKey
}

// newForeignIssuer makes an issuer at url with a fresh key and writes its
// JWKS file.
func newForeignIssuer(t *testing.T, url string) *foreignIssuer {
	t.Helper()
	f := &foreignIssuer{url: url, key: otherKey(t), jwks: filepath.Join(t.TempDir(), "foreign-jwks.json")}
	raw, _ := f.key.PublicKey.Bytes()
	set := map[string]any{"keys": []map[string]string{{"kty": "EC", "crv": "P-256", "kid": "foreign",
		"x": base64.RawURLEncoding.EncodeToString(raw[1:33]), "y": base64.RawURLEncoding.EncodeToString(raw[33:65])}}}
	b, _ := json.Marshal(set)
	if err := os.WriteFile(f.jwks, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// conf is the [[auth.issuer]] entry trusting f.
func (f *foreignIssuer) conf() string {
	return "[[auth.issuer]]\nurl = " + quote(f.url) + "\njwks = " + quote(f.jwks) + "\n"
}

// token signs a WLCG token of the foreign issuer for sub with groups
// (comma-separated) and scope (may be empty).
func (f *foreignIssuer) token(t *testing.T, sub, groups, scope string) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{"iss": f.url, "sub": sub, "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"wlcg.ver": "1.0", "aud": "https://wlcg.cern.ch/jwt/v1/any", "jti": "f"}
	if scope != "" {
		c["scope"] = scope
	}
	if groups != "" {
		c["wlcg.groups"] = strings.Split(groups, ",")
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tok.Header["kid"] = "foreign"
	s, err := tok.SignedString(f.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
