package director

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"sitebox/internal/atomicfile"
	"sitebox/internal/tlsutil"
)

// A director with [director] ca = true is its federation's certificate
// authority: approving a box's join request also issues the box a TLS
// server certificate for its advertised host names, and users trust the
// whole federation with the one CA file GET /.sitebox/ca.pem serves.
const (
	caValidity   = 10 * 365 * 24 * time.Hour
	certValidity = 2 * 365 * 24 * time.Hour
	// CAPath is where the director serves its CA certificate.
	CAPath = APIPrefix + "ca.pem"
)

// CAFile and caKeyFile are the federation CA in a director's state dir.
func CAFile(stateDir string) string    { return filepath.Join(stateDir, "federation", "ca.pem") }
func caKeyFile(stateDir string) string { return filepath.Join(stateDir, "federation", "ca-key.pem") }

// IssuedCertFile is where approve writes the certificate of member name,
// for the director's operator to hand to the box.
func IssuedCertFile(stateDir, name string) string {
	return filepath.Join(stateDir, "federation", "certs", name+".pem")
}

// CA is a federation certificate authority. Safe for concurrent use.
type CA struct {
	cert *x509.Certificate
	key  crypto.Signer
	pem  []byte
}

// LoadOrCreateCA reads the federation CA from stateDir, making it on
// first use (the key 0600) with the name constraints nc; a lock keeps a
// starting director and an operator's approve from making two. An
// existing CA whose constraints are not nc is an error wrapping
// ErrCAConstraints: signing under constraints other than the configured
// ones would promise what the certificate does not hold.
func LoadOrCreateCA(stateDir, name string, nc NameConstraints) (*CA, error) {
	unlock, err := lockCA(stateDir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ca, err := loadCA(stateDir)
	if err == nil && !nc.carriedBy(ca.cert) {
		return nil, fmt.Errorf("%w: the CA %s has %s, the config %s: run `sitebox federation reissue-ca` on this host to re-issue it (same key) with the configured ones",
			ErrCAConstraints, CAFile(stateDir), constraintsOf(ca.cert), nc)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return ca, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name + " federation CA", Organization: []string{"sitebox federation"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	nc.apply(tmpl)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("federation CA: %w", err)
	}
	kpem, err := tlsutil.KeyPEM(key)
	if err != nil {
		return nil, err
	}
	// The key first: a certificate never lies next to a key it does not match.
	if err := atomicfile.Write(caKeyFile(stateDir), kpem, 0o600); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(CAFile(stateDir), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	return loadCA(stateDir)
}

// lockCA takes the CA's lock, for making or changing it.
func lockCA(stateDir string) (unlock func(), err error) {
	dir := filepath.Dir(CAFile(stateDir))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("federation CA: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "ca.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("federation CA: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return nil, fmt.Errorf("federation CA: lock: %w", err)
	}
	return func() { lock.Close() }, nil
}

func loadCA(stateDir string) (*CA, error) {
	certPEM, err := os.ReadFile(CAFile(stateDir))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(caKeyFile(stateDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("federation CA key %s is missing, but the CA certificate %s is there: restore the key from a backup (a new CA would orphan every certificate issued)", caKeyFile(stateDir), CAFile(stateDir))
	}
	if err != nil {
		return nil, fmt.Errorf("federation CA key: %w (run sitebox as the user the director runs as)", err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("federation CA in %s: not PEM", filepath.Dir(CAFile(stateDir)))
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("federation CA: %w", err)
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	signer, ok := k.(crypto.Signer)
	if err != nil || !ok {
		return nil, fmt.Errorf("federation CA key: not a PKCS#8 signing key: %v", err)
	}
	return &CA{cert: cert, key: signer, pem: certPEM}, nil
}

// PEM is the CA certificate users and boxes trust.
func (c *CA) PEM() []byte { return c.pem }

// Issue signs a TLS server certificate for pub, naming the box and valid
// for hosts (names or IP addresses). The result is PEM: the certificate,
// then the CA's, so the box serves the whole chain.
func (c *CA) Issue(pub crypto.PublicKey, name string, hosts []string) ([]byte, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("certificate for %s: no host names (the member has no endpoint)", name)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		// The names are in the SANs only: OpenSSL checks a common name
		// that looks like a host name against the CA's name constraints
		// as a DNS name, so "127.0.0.1" there fails under ca_networks.
		Subject:     pkix.Name{CommonName: name + " (sitebox federation member)", Organization: []string{"sitebox federation"}, OrganizationalUnit: []string{name}},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(certValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, pub, c.key)
	if err != nil {
		return nil, fmt.Errorf("certificate for %s: %w", name, err)
	}
	var out bytes.Buffer
	pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	out.Write(c.pem)
	return out.Bytes(), nil
}

// Hosts are the host names of a member's approved endpoints: what its
// certificate may name, since the director sends clients nowhere else.
func (m *Member) Hosts() []string {
	var hosts []string
	add := func(h string) {
		if h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if m.Root != "" {
		if u, err := url.Parse(m.Root); err == nil && u.Host != "" {
			add(u.Hostname())
		} else if h, _, err := net.SplitHostPort(m.Root); err == nil {
			add(h)
		}
	}
	if u, err := url.Parse(m.HTTPS); err == nil {
		add(u.Hostname())
	}
	return hosts
}

// CAHandler serves the federation CA certificate from stateDir: the one
// file users need for curl -L and xrdcp across the federation's boxes.
func CAHandler(stateDir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(CAFile(stateDir))
		if err != nil {
			http.Error(w, "this director has no federation CA ([director] ca = true makes one)", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/x-pem-file")
		w.Header().Set("Content-Disposition", `attachment; filename="federation-ca.pem"`)
		w.Write(b)
	})
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// WriteIssued keeps the certificate approve issued to member name, for
// the operator to hand to the box; it returns the file's path.
func WriteIssued(stateDir, name string, chain []byte) (string, error) {
	path := IssuedCertFile(stateDir, name)
	return path, atomicfile.Write(path, chain, 0o644)
}
