// Package tlsutil loads the box's TLS certificate, or makes a self-signed
// one on first start so a new box serves https:// with no setup.
package tlsutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"sitebox/internal/atomicfile"
)

// Names of the generated files inside stateDir.
const (
	CertName = "cert.pem"
	KeyName  = "key.pem"
)

// validity of a generated certificate; it is renewed on the first start
// after it has less than renewBefore left.
const (
	validity    = 2 * 365 * 24 * time.Hour
	renewBefore = 7 * 24 * time.Hour
)

// LoadOrCreate returns a server TLS config from certFile and keyFile, or,
// when both are empty, from a self-signed ECDSA certificate for hosts kept
// in stateDir (cert.pem, key.pem 0600) and generated there on first use, so
// restarts keep the identity clients may have pinned or added as a root.
// A generated certificate is replaced only when missing, unreadable or
// about to expire. hosts may be names or IP addresses; with none, the
// certificate is for localhost, 127.0.0.1 and ::1.
func LoadOrCreate(certFile, keyFile, stateDir string, hosts []string) (*tls.Config, error) {
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("tls: give both a certificate and a key file, or neither")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("tls: load certificate %s and key %s: %w", certFile, keyFile, err)
		}
		return config(cert), nil
	}
	if stateDir == "" {
		return nil, errors.New("tls: no certificate given and no state directory to keep a generated one")
	}
	certFile, keyFile = filepath.Join(stateDir, CertName), filepath.Join(stateDir, KeyName)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err == nil && usable(cert) {
		return config(cert), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		// Both files exist but do not load (a half-written pair, a
		// mismatched key): only ever replace what we generated ourselves.
		if _, serr := os.Stat(certFile); serr == nil {
			return nil, fmt.Errorf("tls: load generated certificate %s: %w (remove %s and %s to make a new one)", certFile, err, CertName, KeyName)
		}
	}
	if err := generate(stateDir, certFile, keyFile, hosts); err != nil {
		return nil, err
	}
	if cert, err = tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		return nil, fmt.Errorf("tls: load generated certificate %s: %w", certFile, err)
	}
	return config(cert), nil
}

func config(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// usable reports whether a stored generated certificate still has time left.
func usable(cert tls.Certificate) bool {
	leaf := cert.Leaf
	if leaf == nil && len(cert.Certificate) > 0 {
		leaf, _ = x509.ParseCertificate(cert.Certificate[0])
	}
	return leaf != nil && time.Until(leaf.NotAfter) > renewBefore
}

// generate writes a new key and self-signed certificate. Each file is
// written under a temporary name and renamed, the key first, so a crash
// never leaves a certificate next to a key that does not match it.
func generate(stateDir, certFile, keyFile string, hosts []string) error {
	if len(hosts) == 0 {
		hosts = []string{"localhost", "127.0.0.1", "::1"}
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("tls: state directory: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("tls: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return fmt.Errorf("tls: serial number: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		// The serial in the subject keeps every box's certificate distinct:
		// OpenSSL finds a trust anchor by subject name, so in a bundle of
		// several boxes' certificates with one subject it tries only the
		// first and fails the others ("self-signed certificate").
		Subject: pkix.Name{CommonName: hosts[0], Organization: []string{"sitebox self-signed"},
			SerialNumber: serial.Text(16)},
		NotBefore:             now.Add(-time.Hour), // tolerate small clock skew
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // so clients can trust it directly as a root (curl --cacert)
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("tls: create certificate: %w", err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("tls: encode key: %w", err)
	}
	// A stale certificate must go before the key is replaced, so that no
	// moment has an old certificate beside a new key.
	if err := os.Remove(certFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("tls: remove old certificate: %w", err)
	}
	if err := writeAtomic(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return err
	}
	return writeAtomic(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeAtomic(name string, data []byte, perm os.FileMode) error {
	if err := atomicfile.Write(name, data, perm); err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	return nil
}

// ClientConfig trusts the system roots plus the PEM certificates in
// caFile (e.g. a box's generated self-signed certificate); insecure skips
// verification, for tests only.
func ClientConfig(caFile string, insecure bool) (*tls.Config, error) {
	return ClientConfigRoots(caFile, insecure, nil)
}

// ClientConfigRoots is ClientConfig trusting roots (e.g. the grid CA
// directory) instead of the system roots when roots is not nil.
func ClientConfigRoots(caFile string, insecure bool, roots *x509.CertPool) (*tls.Config, error) {
	tc := &tls.Config{InsecureSkipVerify: insecure, RootCAs: roots}
	if caFile == "" {
		return tc, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool := roots
	if pool != nil {
		pool = pool.Clone()
	} else if pool, _ = x509.SystemCertPool(); pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no PEM certificate in %s", caFile)
	}
	tc.RootCAs = pool
	return tc, nil
}

// HTTPClient is an HTTPS client with ClientConfig's trust and the default
// transport's proxy, dial and idle-connection settings; timeout 0 means
// none.
func HTTPClient(caFile string, insecure bool, timeout time.Duration) (*http.Client, error) {
	tc, err := ClientConfig(caFile, insecure)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	return &http.Client{Transport: tr, Timeout: timeout}, nil
}

// KeyPEM encodes a private key (ECDSA, Ed25519, RSA) as a PKCS#8 PEM
// block, the form every key file of the box uses.
func KeyPEM(key any) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
