package interop

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sitebox/test/peers"
)

// siteboxWithProxy runs the sitebox CLI with a proxy in X509_USER_PROXY
// and the CA directory in X509_CERT_DIR, as a grid user's shell has them.
func siteboxWithProxy(t *testing.T, proxy, caDir string, args ...string) (string, error) {
	t.Helper()
	return runEnv(t, []string{"X509_USER_PROXY=" + proxy, "X509_CERT_DIR=" + caDir, "BEARER_TOKEN=", "BEARER_TOKEN_FILE="}, siteboxBin, args...)
}

// TestSiteboxGetWithProxyFromGSIXrootd: `sitebox get` and `ls` with
// X509_USER_PROXY read from an xrootd 5.5 that accepts only gsi, over
// root:// and roots://: a VOMS proxy reads the VO's namespace; a plain
// proxy reads the public one but is refused the VO's by xrootd's
// authorization database; without a proxy the client names what the
// server asked for.
func TestSiteboxGetWithProxyFromGSIXrootd(t *testing.T) {
	p := gridPKI.Get(t)
	x := startGSIXrootd(t, p, "rl")
	b := p.Scratch(t)
	voms := p.VOMSProxyOf(b, p.Alice, nil).Chain
	plain := b.GlobusProxy(p.Alice, p.CADir, "-rfc").Chain
	expired := p.VOMSProxyOf(b, p.Alice, nil, "-hours", "1", "-pastproxy", "3:00", "-pastac", "3:00", "-vomslife", "1").Chain
	b.OK(t)
	for _, scheme := range []string{"root", "roots"} {
		base := scheme + "://127.0.0.1:" + strconv.Itoa(x.port)
		t.Run(scheme, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "f.txt")
			if out, err := siteboxWithProxy(t, voms, p.CADir, "get", base+"//store/vo/f.txt", dst); err != nil {
				t.Fatalf("sitebox get with a VOMS proxy: %v\n%s", err, out)
			}
			if got := mustRead(t, dst); got != "vo data\n" {
				t.Errorf("got %q", got)
			}
			out, err := siteboxWithProxy(t, voms, p.CADir, "ls", base+"//store/vo")
			if err != nil || !strings.Contains(out, "f.txt") {
				t.Errorf("sitebox ls with a VOMS proxy: %v\n%s", err, out)
			}
			if out, err := siteboxWithProxy(t, plain, p.CADir, "get", base+"//store/pub/p.txt", "-"); err != nil || out != "public data\n" {
				t.Errorf("a plain proxy on the public path: %v\n%s", err, out)
			}
			if out, err := siteboxWithProxy(t, plain, p.CADir, "get", base+"//store/vo/f.txt", "-"); err == nil || strings.Contains(out, "vo data") {
				t.Errorf("a plain proxy read the VO's path, which xrootd refuses it: %s", out)
			}
			// No proxy anywhere: the client says what the server wants.
			if defaultProxyAbsent() {
				out, err = runEnv(t, []string{"X509_USER_PROXY=", "X509_CERT_DIR=" + p.CADir}, siteboxBin, "get", base+"//store/pub/p.txt", "-")
				if err == nil || !strings.Contains(out, "gsi an X.509 proxy") {
					t.Errorf("without a proxy: %v\n%s", err, out)
				}
			}
		})
	}
	t.Run("expired proxy named", func(t *testing.T) {
		out, err := siteboxWithProxy(t, expired, p.CADir, "get", "root://127.0.0.1:"+strconv.Itoa(x.port)+"//store/pub/p.txt", "-")
		if err == nil || !strings.Contains(out, "expired") {
			t.Errorf("an expired X509_USER_PROXY: %v\n%s", err, out)
		}
	})
	t.Run("server certificate of an unknown CA", func(t *testing.T) {
		// The server's host certificate must chain to X509_CERT_DIR: a
		// directory without the test CA refuses it before the proxy is
		// used.
		empty := t.TempDir()
		out, err := siteboxWithProxy(t, voms, empty, "get", "root://127.0.0.1:"+strconv.Itoa(x.port)+"//store/pub/p.txt", "-")
		if err == nil || !strings.Contains(out, "certificate") {
			t.Errorf("a server of an unknown CA: %v\n%s", err, out)
		}
	})
}

// TestSiteboxGetWithProxyFromXrdHTTP: `sitebox get` and `ls` with
// X509_USER_PROXY present the proxy as the TLS client certificate to
// XrdHttp 5.5 with the VOMS extractor, whose authorization database
// lets only VO testvo read /vo: the VOMS proxy is served, a plain proxy
// and no proxy are refused (403).
func TestSiteboxGetWithProxyFromXrdHTTP(t *testing.T) {
	peers.Require(t, "xrootd")
	c := makeGridCreds(t)
	x := startXrdHTTPVOMS(t, c)
	dst := filepath.Join(t.TempDir(), "f")
	if out, err := siteboxWithProxy(t, c.voms, c.pki.CADir, "get", x.url+"/vo/f", dst); err != nil {
		t.Fatalf("sitebox get with a VOMS proxy: %v\n%s", err, out)
	}
	if st, err := os.Stat(dst); err != nil || st.Size() != 4096 {
		t.Errorf("downloaded: %v %v", st, err)
	}
	if out, err := siteboxWithProxy(t, c.voms, c.pki.CADir, "ls", x.url+"/vo/"); err != nil || !strings.Contains(out, "f") {
		t.Errorf("sitebox ls with a VOMS proxy: %v\n%s", err, out)
	}
	if out, err := siteboxWithProxy(t, c.plain, c.pki.CADir, "get", x.url+"/vo/f", "-"); err == nil || !strings.Contains(out, "403") && !strings.Contains(strings.ToLower(out), "denied") && !strings.Contains(out, "permission") {
		t.Errorf("a plain proxy: %v\n%s", err, tail(out, 500))
	}
	if defaultProxyAbsent() {
		out, err := runEnv(t, []string{"X509_USER_PROXY=", "X509_CERT_DIR=" + c.pki.CADir}, siteboxBin, "get", "--ca", c.pki.Root.Cert, x.url+"/vo/f", "-")
		if err == nil {
			t.Errorf("no proxy was served: %s", tail(out, 300))
		}
	}
}

// defaultProxyAbsent says whether the user running the tests has no
// proxy where the grid's clients look without X509_USER_PROXY.
func defaultProxyAbsent() bool {
	_, err := os.Stat("/tmp/x509up_u" + strconv.Itoa(os.Getuid()))
	return err != nil
}
