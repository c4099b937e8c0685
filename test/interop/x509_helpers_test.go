package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/x509grid/x509test"
	"sitebox/test/peers"
)

// gridPKI is the test CA, users and VOMS servers the X.509 tests share,
// with keys OpenSSL accepts in a handshake;
// TestMain removes it.
var gridPKI = x509test.Shared{Bits: 2048} // OpenSSL TLS refuses 1024-bit keys

// gridCreds are the credentials the X.509 tests present, made with the
// grid's own tools: grid-proxy-init, voms-proxy-fake, openssl.
type gridCreds struct {
	pki *x509test.PKI
	// Proxy files, each the proxy, its key and the user certificate.
	voms, plain, otherVO, unknownCA, expired, revoked, unlisted string
	// refused are refusedGridProxies' proxies, by kind.
	refused map[string]string
}

func makeGridCreds(t *testing.T) *gridCreds {
	t.Helper()
	p := gridPKI.Get(t)
	b := p.Scratch(t)
	c := &gridCreds{pki: p}
	c.voms = p.VOMSProxyOf(b, p.Alice, nil).Chain
	c.plain = b.GlobusProxy(p.Alice, p.CADir, "-rfc").Chain
	c.otherVO = b.VOMSProxy(p.Alice, p.VOMS2, p.CADir, x509test.OtherVO, x509test.VOMS2Host, []string{x509test.OtherFQAN}).Chain
	c.unknownCA = b.OpenSSLProxy(p.Eve, "proxy").Chain
	// Valid for an hour, from three hours ago.
	c.expired = p.VOMSProxyOf(b, p.Alice, nil, "-hours", "1", "-pastproxy", "3:00", "-pastac", "3:00", "-vomslife", "1").Chain
	c.revoked = p.VOMSProxyOf(b, p.Mallory, nil).Chain
	// testvo's attributes, signed by the VOMS server the vomsdir lists
	// for othervo only.
	c.unlisted = b.VOMSProxy(p.Alice, p.VOMS2, p.CADir, x509test.TestVO, x509test.VOMS2Host, []string{x509test.TestFQAN}).Chain
	c.refused = refusedGridProxies(p, b, b.OpenSSLProxy)
	b.OK(t)
	return c
}

// x509Box is a box serving /store/vo (read = "vo" of testvo) and
// /store/tok (read = "token") with the test CA's host certificate,
// taking X.509 proxies; its own site issuer makes tokens.
type x509Box struct {
	*issuerNode
	pool, accessLog string
}

// extra is more config, after the box's own.
func startX509Box(t *testing.T, c *gridCreds, extra ...string) *x509Box {
	t.Helper()
	pool := t.TempDir()
	for _, f := range []string{"vo/f", "tok/f"} {
		writeRandom(t, filepath.Join(pool, f), 4096)
	}
	os.Chmod(pool, 0o750) // a box running jobs refuses pools its jobs could read
	spec := prepareNode(t, 0)
	spec.https = "cert = " + strconv.Quote(c.pki.Host.Cert) + "\nkey = " + strconv.Quote(c.pki.Host.Key) + "\n"
	log := filepath.Join(t.TempDir(), "access.log")
	spec.server = "access_log = " + strconv.Quote(log) + "\n"
	conf := `
[[auth.namespace]]
prefix = "/store/vo"
read = "vo"
vos = ["testvo"]
[[auth.namespace]]
prefix = "/store/tok"
read = "token"
[auth.x509]
cert_dir = ` + strconv.Quote(c.pki.CADir) + `
voms_dir = ` + strconv.Quote(c.pki.VOMSDir) + `
[[export]]
prefix = "/store"
pools = [` + strconv.Quote(pool) + `]
` + strings.Join(extra, "")
	// Its site issuer speaks for testvo too, as a site's might: the
	// certificates must not be needed for the config to stand.
	n := spec.startIssuer(t, "x509box", "T3_TEST", []string{"testvo"}, conf)
	return &x509Box{issuerNode: n, pool: pool, accessLog: log}
}

// vomsXrdHTTP is XrdHttp 5.5 with the VOMS extractor (libXrdVoms) and an
// authorization database letting VO testvo read /vo, the peer each of
// the box's decisions is compared with.
type vomsXrdHTTP struct {
	url  string // https://127.0.0.1:PORT
	data string // its files: vo/f
}

func startXrdHTTPVOMS(t *testing.T, c *gridCreds) *vomsXrdHTTP {
	t.Helper()
	peers.Require(t, "xrootd")
	lib := "/usr/lib/x86_64-linux-gnu/libXrdVoms-5.so"
	peers.RequireFile(t, lib, "xrootd-voms-plugins (libXrdVoms)")
	work, data := t.TempDir(), t.TempDir()
	writeRandom(t, filepath.Join(data, "vo", "f"), 4096)
	copyFile(t, c.pki.Host.Cert, filepath.Join(work, "host.pem"), 0o644)
	copyFile(t, c.pki.Host.Key, filepath.Join(work, "host.key"), 0o400)
	// xrootd runs as its own user, which may not enter the test PKI.
	caDir, vomsDir := filepath.Join(work, "certificates"), filepath.Join(work, "vomsdir")
	for _, d := range [][2]string{{c.pki.CADir, caDir}, {c.pki.VOMSDir, vomsDir}} {
		os.MkdirAll(d[1], 0o755)
		copyTree(t, d[0], d[1])
	}
	authdb := filepath.Join(work, "authdb")
	if err := os.WriteFile(authdb, []byte("o testvo /vo rl\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// libXrdVoms asks libvomsapi, which reads these.
	t.Setenv("X509_CERT_DIR", caDir)
	t.Setenv("X509_VOMS_DIR", vomsDir)
	rp, _ := peers.FreePort()
	hp, _ := peers.FreePort()
	p, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{
		DataDir: data, Port: rp, Name: "voms-" + strconv.Itoa(hp), WorkDir: work,
		Extra: []string{
			"xrd.tls " + filepath.Join(work, "host.pem") + " " + filepath.Join(work, "host.key"),
			"xrd.tlsca certdir " + caDir + " crlcheck all refresh 1m",
			"xrd.protocol XrdHttp:" + strconv.Itoa(hp) + " libXrdHttp.so",
			"http.secxtractor " + lib + " certfmt=pem|grpopt=useall|vos=testvo,othervo",
			"ofs.authorize 1",
			"acc.authdb " + authdb,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(work, "log", "voms-"+strconv.Itoa(hp), "xrootd.log"))
			t.Logf("xrootd log:\n%s", tail(string(b), 6000))
		}
	})
	return &vomsXrdHTTP{url: "https://127.0.0.1:" + strconv.Itoa(hp), data: data}
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(dst, data, mode)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// gridClient is one real client's GET of a URL with a proxy (and
// perhaps a token): whether it got the file, and what it printed.
type gridClient struct {
	name string
	tool string
	get  func(t *testing.T, c *gridCreds, proxy, url, token string) (ok bool, out string)
}

func gridClients() []gridClient {
	return []gridClient{
		{"curl", "curl", curlWithProxy},
		{"davix", "davix-get", davixWithProxy},
		{"gfal", "gfal-copy", gfalWithProxy},
	}
}

// toolRun runs a client with the grid environment and a deadline.
func toolRun(t *testing.T, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// curlWithProxy: curl --cert proxy --key proxy --capath CADIR; out is
// what curl printed, the status and, for a refusal, the body.
func curlWithProxy(t *testing.T, c *gridCreds, proxy, url, token string) (bool, string) {
	body := filepath.Join(t.TempDir(), "body")
	args := []string{"-sS", "--capath", c.pki.CADir, "--cert", proxy, "--key", proxy, "-o", body, "-w", "HTTP %{http_code}\n"}
	if token != "" {
		args = append(args, "-H", "Authorization: Bearer "+token)
	}
	out, _ := toolRun(t, nil, "curl", append(args, url)...)
	ok := strings.HasSuffix(out, "HTTP 200\n")
	if b, err := os.ReadFile(body); err == nil && !ok {
		out += string(b)
	}
	return ok, out
}

// davixWithProxy: davix-get --cert proxy --key proxy --capath CADIR
// (davix-get does not read X509_USER_PROXY itself).
func davixWithProxy(t *testing.T, c *gridCreds, proxy, url, token string) (bool, string) {
	args := []string{"--capath", c.pki.CADir, "--cert", proxy, "--key", proxy}
	if token != "" {
		args = append(args, "-H", "Authorization: Bearer "+token)
	}
	dst := filepath.Join(t.TempDir(), "f")
	out, err := toolRun(t, nil, "davix-get", append(args, url, dst)...)
	return err == nil, out
}

// gfalWithProxy: gfal-copy with X509_USER_PROXY and X509_CERT_DIR.
func gfalWithProxy(t *testing.T, c *gridCreds, proxy, url, token string) (bool, string) {
	env := []string{"X509_USER_PROXY=" + proxy, "X509_CERT_DIR=" + c.pki.CADir}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		env = append(env, "GFAL_PYTHONBIN=/usr/bin/python3")
	}
	if token != "" {
		env = append(env, "BEARER_TOKEN="+token)
	}
	dst := "file://" + filepath.Join(t.TempDir(), "f")
	out, err := toolRun(t, env, "gfal-copy", "-f", url, dst)
	return err == nil, out
}
