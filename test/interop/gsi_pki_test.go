package interop

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gsiPKI is a throwaway grid: CAs run with `openssl ca` (so users can
// be revoked), a host certificate for localhost and 127.0.0.1, users,
// VOMS servers, a CA directory with CRLs and a vomsdir, made by the
// real tools at test time (openssl, grid-proxy-init, voms-proxy-fake).
// Every key is RSA, as gsi needs.
type gsiPKI struct {
	t       *testing.T
	dir     string
	caDir   string // hashed CA files and CRLs, as X509_CERT_DIR
	vomsDir string
	ca      gridCA // in caDir
	other   gridCA // not in caDir
	host    gridCred
	n       int
}

// gridCred is a certificate (PEM) and its key.
type gridCred struct{ cert, key, subject string }

// gridCA is a CA directory of `openssl ca`.
type gridCA struct {
	gridCred
	cnf string
}

const gridExtensions = `
[req]
distinguished_name = dn
[dn]
[v3_ca]
basicConstraints = critical,CA:true
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[v3_user]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment,dataEncipherment
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[v3_host]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth,clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost,IP:127.0.0.1
[proxy]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment
proxyCertInfo = critical,language:id-ppl-inheritAll
`

const gridCAConf = `
[ca]
default_ca = this
[this]
dir = %s
database = $dir/index.txt
new_certs_dir = $dir
certificate = $dir/ca.pem
private_key = $dir/ca.key
serial = $dir/serial
crlnumber = $dir/crlnumber
default_md = sha256
default_days = 30
default_crl_days = 30
policy = anything
unique_subject = no
copy_extensions = none
[anything]
commonName = supplied
` + gridExtensions

// The names of the test grid.
const (
	gridCADN    = "/DC=org/DC=example/CN=Test Grid CA"
	gridAliceDN = "/DC=org/DC=example/CN=Alice"
	gridVO      = "testvo"
	gridOtherVO = "othervo"
)

func newGSIPKI(t *testing.T) *gsiPKI {
	t.Helper()
	for _, tool := range []string{"openssl", "grid-proxy-init", "voms-proxy-fake"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is missing: run scripts/setup.sh", tool)
		}
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	g := &gsiPKI{t: t, dir: dir, caDir: filepath.Join(dir, "certificates"), vomsDir: filepath.Join(dir, "vomsdir")}
	g.write("ext.cnf", gridExtensions)
	g.ca = g.newCA("ca", gridCADN)
	g.other = g.newCA("otherca", "/DC=org/DC=other/CN=Other CA")
	g.host = g.issue(g.ca, "host", "/DC=org/DC=example/CN=localhost", "v3_host")
	os.MkdirAll(g.caDir, 0o755)
	g.copy(g.ca.cert, filepath.Join(g.caDir, g.hash("x509", "-hash", g.ca.cert)+".0"))
	g.copy(g.ca.cert, filepath.Join(g.caDir, g.hash("x509", "-subject_hash_old", g.ca.cert)+".0"))
	// Both VOs' servers are listed: a proxy of othervo is verified and
	// names its VO, which the namespace then refuses.
	for _, vo := range []string{gridVO, gridOtherVO} {
		os.MkdirAll(filepath.Join(g.vomsDir, vo), 0o755)
		g.write(filepath.Join("vomsdir", vo, "voms."+vo+".lsc"), "/DC=org/DC=example/CN=voms."+vo+"\n"+gridCADN+"\n")
	}
	return g
}

func (g *gsiPKI) path(name string) string { return filepath.Join(g.dir, name) }

func (g *gsiPKI) run(name string, args ...string) string {
	g.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "RANDFILE="+g.path(".rnd"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		g.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

func (g *gsiPKI) write(name, text string) string {
	g.t.Helper()
	p := g.path(name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		g.t.Fatal(err)
	}
	return p
}

func (g *gsiPKI) copy(src, dst string) {
	g.t.Helper()
	b, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(dst, b, 0o644)
	}
	if err != nil {
		g.t.Fatal(err)
	}
}

func (g *gsiPKI) hash(kind, flag, file string) string {
	return strings.TrimSpace(g.run("openssl", kind, flag, "-noout", "-in", file))
}

func (g *gsiPKI) newKey(name string) string {
	key := g.path(name + ".key")
	g.run("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key)
	os.Chmod(key, 0o600)
	return key
}

func (g *gsiPKI) newCA(id, subject string) gridCA {
	g.t.Helper()
	d := g.path(id)
	os.Mkdir(d, 0o755)
	ca := gridCA{gridCred: gridCred{cert: filepath.Join(d, "ca.pem"), key: g.newKey(id + "/ca"), subject: subject}}
	ca.cnf = g.write(id+"/openssl.cnf", fmt.Sprintf(gridCAConf, d))
	g.write(id+"/index.txt", "")
	g.write(id+"/serial", "1000\n")
	g.write(id+"/crlnumber", "01\n")
	g.run("openssl", "req", "-x509", "-new", "-key", ca.key, "-out", ca.cert, "-subj", subject, "-days", "60",
		"-set_serial", "1", "-config", ca.cnf, "-extensions", "v3_ca")
	return ca
}

// issue has ca sign a certificate for subject with a profile of
// gridExtensions.
func (g *gsiPKI) issue(ca gridCA, id, subject, profile string) gridCred {
	g.t.Helper()
	c := gridCred{cert: g.path(id + ".pem"), key: g.newKey(id), subject: subject}
	csr := g.path(id + ".csr")
	g.run("openssl", "req", "-new", "-key", c.key, "-out", csr, "-subj", subject, "-config", ca.cnf)
	g.run("openssl", "ca", "-batch", "-notext", "-config", ca.cnf, "-extensions", profile, "-preserveDN", "-in", csr, "-out", c.cert)
	return c
}

// user issues a user certificate from the grid's CA.
func (g *gsiPKI) user(id, cn string) gridCred {
	return g.issue(g.ca, id, "/DC=org/DC=example/CN="+cn, "v3_user")
}

// revoke revokes c and writes the CA's CRL into the CA directory.
func (g *gsiPKI) revoke(c gridCred) {
	g.t.Helper()
	g.run("openssl", "ca", "-config", g.ca.cnf, "-revoke", c.cert, "-crl_reason", "keyCompromise")
	crl := g.path("ca.crl")
	g.run("openssl", "ca", "-gencrl", "-config", g.ca.cnf, "-out", crl)
	g.copy(crl, filepath.Join(g.caDir, g.hash("crl", "-hash", crl)+".r0"))
}

// vomsServer issues the VOMS server certificate of vo.
func (g *gsiPKI) vomsServer(vo string) gridCred {
	return g.issue(g.ca, "voms-"+vo, "/DC=org/DC=example/CN=voms."+vo, "v3_host")
}

func (g *gsiPKI) unique(prefix string) string {
	g.n++
	return fmt.Sprintf("%s-%d", prefix, g.n)
}

// vomsProxy makes a VOMS proxy file of user with server's attributes
// for vo; extra are voms-proxy-fake options (-limited, -pastproxy…).
func (g *gsiPKI) vomsProxy(user, server gridCred, vo string, extra ...string) string {
	g.t.Helper()
	out := g.path(g.unique("voms") + ".pem")
	args := []string{"-q", "-rfc", "-cert", user.cert, "-key", user.key, "-certdir", g.caDir,
		"-hostcert", server.cert, "-hostkey", server.key, "-voms", vo, "-uri", "voms." + vo + ":15000",
		"-fqan", "/" + vo + "/Role=NULL/Capability=NULL", "-bits", "2048", "-out", out}
	g.run("voms-proxy-fake", append(args, extra...)...)
	return out
}

// plainProxy makes an RFC 3820 proxy without VOMS attributes with
// grid-proxy-init; caDir is the CA directory it checks the user with.
func (g *gsiPKI) plainProxy(user gridCred, caDir string, extra ...string) string {
	g.t.Helper()
	out := g.path(g.unique("proxy") + ".pem")
	args := []string{"-q", "-rfc", "-cert", user.cert, "-key", user.key, "-certdir", caDir, "-bits", "2048", "-out", out}
	g.run("grid-proxy-init", append(args, extra...)...)
	return out
}

// forgedProxy is a proxy file of user whose proxy certificate is signed
// by another key: an impostor CA's with the user's name.
func (g *gsiPKI) forgedProxy(user gridCred) string {
	g.t.Helper()
	imp := g.newKey(g.unique("impostor"))
	impCert := g.path(g.unique("impostor") + ".pem")
	g.run("openssl", "req", "-x509", "-new", "-key", imp, "-out", impCert, "-subj", user.subject, "-days", "5",
		"-config", g.path("ext.cnf"), "-extensions", "v3_ca")
	id := g.unique("forged")
	key := g.newKey(id)
	csr := g.path(id + ".csr")
	g.run("openssl", "req", "-new", "-key", key, "-out", csr, "-subj", user.subject+"/CN=424242", "-config", g.path("ext.cnf"))
	cert := g.path(id + ".pem")
	g.run("openssl", "x509", "-req", "-in", csr, "-CA", impCert, "-CAkey", imp, "-set_serial", "424242", "-days", "1",
		"-extfile", g.path("ext.cnf"), "-extensions", "proxy", "-out", cert)
	return g.proxyFile(id+"-file", cert, key, user.cert)
}

// proxyFile writes a proxy file: the proxy, its key, then its issuers.
func (g *gsiPKI) proxyFile(name string, parts ...string) string {
	g.t.Helper()
	var all []byte
	for _, p := range parts {
		b, err := os.ReadFile(p)
		if err != nil {
			g.t.Fatal(err)
		}
		all = append(all, b...)
	}
	out := g.path(name + ".pem")
	if err := os.WriteFile(out, all, 0o600); err != nil {
		g.t.Fatal(err)
	}
	return out
}
