package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"sitebox/test/peers"
)

// makeAuthFiles writes the test file once as pool/none/f and hard-links
// it into the other levels' namespaces: one copy in the page cache
// serves all rows, so no row reads from disk.
func makeAuthFiles(pool string, size int64) error {
	for _, l := range authLevels {
		if err := os.MkdirAll(filepath.Join(pool, l), 0o755); err != nil {
			return err
		}
	}
	src := filepath.Join(pool, "none", "f")
	if err := makeFile(src, size); err != nil {
		return err
	}
	for _, l := range authLevels[1:] {
		dst := filepath.Join(pool, l, "f")
		if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := os.Link(src, dst); err != nil {
			return err
		}
	}
	return nil
}

// authBoxConfig is a box's TOML: /bench exported from pool, with a
// public-read namespace per protection level. Both boxes need an issuer
// for [[auth.namespace]]; the plain one names the main box's URL, as it
// issues nothing here.
func authBoxConfig(name, state, rootAddr, httpAddr string, plainHTTP bool, pool, issuer string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[server]\nname = %q\nstate_dir = %q\nlog_level = \"warn\"\n\n", name, state)
	// HTTP/2 on, for the variant row that shows why it is off by default.
	fmt.Fprintf(&b, "[root]\naddr = %q\n\n[https]\naddr = %q\nplain_http = %t\nhttp2 = true\n\n", rootAddr, httpAddr, plainHTTP)
	fmt.Fprintf(&b, "[[export]]\nprefix = \"/bench\"\npools = [%q]\n\n", pool)
	fmt.Fprintf(&b, "[auth]\nsite_issuer = true\nissuer_url = %q\n", issuer)
	for _, l := range authLevels {
		fmt.Fprintf(&b, "\n[[auth.namespace]]\nprefix = \"/bench/%s\"\nread = \"public\"\nprotection = %q\n", l, l)
	}
	return b.String()
}

// startAuthBoxes starts both boxes and makes the client CA directory.
// The returned boxes are non-nil whenever something was started, so the
// caller stops them even after a partial start.
func startAuthBoxes(ctx context.Context, bin, dir, pool string) (*authBoxes, error) {
	bx := &authBoxes{}
	for _, p := range []*int{&bx.rootPort, &bx.httpsPort, &bx.httpPort} {
		var err error
		if *p, err = peers.FreePort(); err != nil {
			return nil, err
		}
	}
	issuer := fmt.Sprintf("https://127.0.0.1:%d", bx.httpsPort)
	start := func(name string, rootAddr string, httpPort int, plain bool) (*peers.Process, error) {
		httpAddr := "127.0.0.1:" + strconv.Itoa(httpPort)
		toml := authBoxConfig("bench-auth-"+name, filepath.Join(dir, name), rootAddr, httpAddr, plain, pool, issuer)
		ports := []int{httpPort}
		if rootAddr != "off" {
			ports = append(ports, bx.rootPort)
		}
		p, err := startConfigBox(ctx, bin, filepath.Join(dir, name+".toml"), toml, true, ports)
		if err != nil {
			return nil, fmt.Errorf("bench auth: start %s box: %w", name, err)
		}
		return p, nil
	}
	var err error
	if bx.main, err = start("box", "127.0.0.1:"+strconv.Itoa(bx.rootPort), bx.httpsPort, false); err != nil {
		return nil, err
	}
	if bx.plain, err = start("plain", "off", bx.httpPort, true); err != nil {
		return bx, err
	}
	bx.cert = filepath.Join(dir, "box", "tls", "cert.pem")
	bx.caDir = filepath.Join(dir, "x509")
	if err := makeCADir(ctx, bx.caDir, bx.cert); err != nil {
		return bx, fmt.Errorf("bench auth: CA directory for roots://: %w", err)
	}
	if _, err := exec.LookPath("xrootd"); err == nil {
		if err := bx.startXrootd(ctx, dir, pool); err != nil {
			return bx, err
		}
	}
	return bx, nil
}

// startXrootd runs the peer with TLS (the box's certificate and key) over
// the pool, exported as "/".
func (b *authBoxes) startXrootd(ctx context.Context, dir, pool string) error {
	work := filepath.Join(dir, "xrootd")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"cert.pem", "key.pem"} {
		data, err := os.ReadFile(filepath.Join(dir, "box", "tls", f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(work, f), data, 0o600); err != nil {
			return err
		}
	}
	var err error
	if b.xrdPort, err = peers.FreePort(); err != nil {
		return err
	}
	b.xrd, err = peers.StartXrootd(ctx, peers.XrootdConfig{DataDir: pool, Port: b.xrdPort, Name: "bench-auth", WorkDir: work,
		Extra: []string{"xrd.tls " + filepath.Join(work, "cert.pem") + " " + filepath.Join(work, "key.pem"), "xrd.tlsca certdir " + b.caDir}})
	if err != nil {
		return fmt.Errorf("bench auth: start the xrootd peer: %w", err)
	}
	return nil
}

// makeCADir makes the X509_CERT_DIR xrdcp trusts for roots://: the box's
// certificate and the subject-hash link OpenSSL looks it up by.
func makeCADir(ctx context.Context, dir, cert string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o755); err != nil { // MkdirAll keeps an existing dir's mode
		return err
	}
	pem, err := os.ReadFile(cert)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), pem, 0o644); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "openssl", "rehash", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("openssl rehash %s: %w: %s", dir, err, trimMsg(out))
	}
	return nil
}
