package doctor

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/config"
	"sitebox/internal/origin"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// listen starts a TCP listener on 127.0.0.1 that accepts and drops
// connections until the test ends.
func listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// closedPort is an address where nothing listens any more.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// writeCert makes a self-signed certificate for hosts valid from
// notBefore to notAfter, and writes cert.pem and key.pem in dir.
func writeCert(t *testing.T, dir string, notBefore, notAfter time.Time, hosts ...string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cert.pem")
	os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return path
}

// baseConfig is a box with root:// and https:// on the given addresses,
// one export and a state dir, defaults applied.
func baseConfig(t *testing.T, rootAddr, httpsAddr string) *config.Config {
	t.Helper()
	cfg := &config.Config{
		Server:  config.Server{StateDir: t.TempDir(), MetricsAddr: config.Off},
		Root:    xrdserver.Settings{Addr: rootAddr},
		HTTPS:   webdav.Settings{Addr: httpsAddr},
		Exports: []origin.Export{{Prefix: "/store", Pools: []string{t.TempDir()}}},
	}
	cfg.ApplyDefaults("testhost", false)
	return cfg
}

// ifaces is a machine with loopback and the given addresses on eth0.
func ifaces(addrs ...string) func() ([]Interface, error) {
	eth := Interface{Name: "eth0", Up: true}
	for _, a := range addrs {
		eth.Addrs = append(eth.Addrs, netip.MustParseAddr(a))
	}
	lo := Interface{Name: "lo", Up: true, Loopback: true, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}
	return func() ([]Interface, error) { return []Interface{lo, eth}, nil }
}

// resolver answers from a table; names not in it do not resolve.
func resolver(table map[string]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		if ip, err := netip.ParseAddr(host); err == nil {
			return []netip.Addr{ip}, nil
		}
		if a, ok := table[host]; ok {
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
}

// healthyFS is a filesystem with plenty of room.
func healthyFS(string) (FSInfo, error) {
	return FSInfo{Total: 1 << 40, Avail: 1 << 39, Files: 1 << 20, FilesFree: 1 << 19}, nil
}

// find returns the checks of a group.
func find(r *Report, group string) []Check {
	var out []Check
	for _, c := range r.Checks {
		if c.Group == group {
			out = append(out, c)
		}
	}
	return out
}

// mustHave fails unless c has status want and every text fragment in
// its name, summary, explanation or fix.
func mustHave(t *testing.T, c Check, want Status, texts ...string) {
	t.Helper()
	if c.Status != want {
		t.Errorf("%s: status %s, want %s: %s", c.Name, c.Status, want, c.Summary)
	}
	all := c.Name + "\n" + c.Summary + "\n" + c.Explain + "\n" + c.Fix
	for _, s := range texts {
		if !strings.Contains(all, s) {
			t.Errorf("%s: lacks %q:\n%s", c.Name, s, all)
		}
	}
}
