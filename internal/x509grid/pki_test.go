package x509grid

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tests' credentials are made by the real tools at test time:
// openssl for CAs, user certificates, CRLs and RFC 3820 proxies,
// grid-proxy-init for Globus proxies, voms-proxy-fake for VOMS proxies.
// Nothing with a key is committed.

// builder runs the tools in one directory; the first failure sticks and
// every later call does nothing.
type builder struct {
	dir string
	err error
	n   int // for unique file names
}

func (b *builder) run(name string, args ...string) string {
	if b.err != nil {
		return ""
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), "RANDFILE="+filepath.Join(b.dir, ".rnd"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		b.err = fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

func (b *builder) path(name string) string { return filepath.Join(b.dir, name) }

// ok fails the test if making a credential failed.
func (b *builder) ok(t testing.TB) {
	t.Helper()
	if b.err != nil {
		t.Fatalf("making credentials: %v", b.err)
	}
}

func (b *builder) unique(prefix string) string {
	b.n++
	return fmt.Sprintf("%s-%d", prefix, b.n)
}

func (b *builder) write(name, text string) string {
	p := b.path(name)
	if b.err == nil {
		b.err = os.WriteFile(p, []byte(text), 0o600)
	}
	return p
}

// cat writes the files' contents, in order, to a new file.
func (b *builder) cat(name string, files ...string) string {
	var all []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil && b.err == nil {
			b.err = err
		}
		all = append(all, data...)
	}
	p := b.path(name)
	if b.err == nil {
		b.err = os.WriteFile(p, all, 0o600)
	}
	return p
}

// cred is a certificate file (the certificate, then its issuers below
// the CA, as a proxy file holds them) and its key.
type cred struct {
	chain   string // PEM certificates, leaf first
	cert    string // PEM, the leaf first
	key     string
	subject string // the leaf's, slash form
}

// testCA is a CA run with `openssl ca`, so it can revoke and issue CRLs.
type testCA struct {
	cred
	cnf string
}

// extensionsConf holds every extension profile the tests issue with.
const extensionsConf = `
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
[proxy]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment
proxyCertInfo = critical,language:id-ppl-inheritAll
[proxy_limited]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment
proxyCertInfo = critical,language:1.3.6.1.4.1.3536.1.1.1.9
[proxy_pathlen0]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment
proxyCertInfo = critical,language:id-ppl-inheritAll,pathlen:0
[proxy_independent]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment
proxyCertInfo = critical,language:id-ppl-independent
[proxy_noncritical]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment
proxyCertInfo = language:id-ppl-inheritAll
[proxy_certsign]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyCertSign
proxyCertInfo = critical,language:id-ppl-inheritAll
[proxy_unknown_critical]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment
proxyCertInfo = critical,language:id-ppl-inheritAll
1.2.3.4.5 = critical,ASN1:NULL
`

// caConf is `openssl ca`'s configuration for one CA's directory.
const caConf = `
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
` + extensionsConf

// newKey makes a key: RSA (what the grid tools expect; 1024 bits to keep
// the tests fast on a busy machine), or P-256.
func (b *builder) newKey(name string, ec bool) string {
	key := b.path(name + ".key")
	if ec {
		b.run("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", key)
	} else {
		b.run("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", key)
	}
	return key
}

// newRootCA makes a self-signed CA.
func (b *builder) newRootCA(id, subject string, ec bool) *testCA {
	ca := b.caDir(id, subject, ec)
	b.run("openssl", "req", "-x509", "-new", "-key", ca.key, "-out", ca.cert, "-subj", subject,
		"-days", "60", "-set_serial", "1", "-config", ca.cnf, "-extensions", "v3_ca")
	ca.chain, ca.cred.subject = ca.cert, subject
	return ca
}

// newSubCA makes a CA issued by parent.
func (b *builder) newSubCA(parent *testCA, id, subject string) *testCA {
	ca := b.caDir(id, subject, false)
	csr := b.path(id + ".csr")
	b.run("openssl", "req", "-new", "-key", ca.key, "-out", csr, "-subj", subject, "-config", ca.cnf)
	b.run("openssl", "ca", "-batch", "-config", parent.cnf, "-extensions", "v3_ca", "-preserveDN",
		"-days", "45", "-in", csr, "-out", ca.cert)
	ca.chain, ca.cred.subject = ca.cert, subject
	return ca
}

func (b *builder) caDir(id, subject string, ec bool) *testCA {
	dir := b.path(id)
	if b.err == nil {
		b.err = os.Mkdir(dir, 0o700)
	}
	ca := &testCA{}
	ca.cert, ca.key = filepath.Join(dir, "ca.pem"), b.newKey(id+"/ca", ec)
	ca.cnf = b.write(id+"/openssl.cnf", fmt.Sprintf(caConf, dir))
	b.write(id+"/index.txt", "")
	b.write(id+"/serial", "1000\n")
	b.write(id+"/crlnumber", "01\n")
	return ca
}

// issue has ca sign a certificate for subject with the extension
// profile; extra are `openssl ca` options (-startdate, -enddate).
func (b *builder) issue(ca *testCA, id, subject, profile string, extra ...string) cred {
	c := cred{cert: b.path(id + ".pem"), key: b.newKey(id, false)}
	csr := b.path(id + ".csr")
	b.run("openssl", "req", "-new", "-key", c.key, "-out", csr, "-subj", subject, "-config", ca.cnf)
	args := append([]string{"ca", "-batch", "-notext", "-config", ca.cnf, "-extensions", profile, "-preserveDN",
		"-in", csr, "-out", c.cert}, extra...)
	b.run("openssl", args...)
	c.chain, c.subject = c.cert, subject
	return c
}

func (b *builder) revoke(ca *testCA, c cred, why string) {
	b.run("openssl", "ca", "-config", ca.cnf, "-revoke", c.cert, "-crl_reason", why)
}

// crl writes ca's CRL; extra are `openssl ca -gencrl` options.
func (b *builder) crl(ca *testCA, extra ...string) string {
	out := b.path(b.unique("crl") + ".pem")
	b.run("openssl", append([]string{"ca", "-gencrl", "-config", ca.cnf, "-out", out}, extra...)...)
	return out
}

// subjectOf is the first certificate's subject in slash form, as
// OpenSSL's X509_NAME_oneline writes it.
func (b *builder) subjectOf(file string) string {
	out := strings.TrimSuffix(b.run("openssl", "x509", "-in", file, "-noout", "-subject", "-nameopt", "compat"), "\n")
	return strings.TrimPrefix(out, "subject=")
}

// hash is `openssl x509 -hash` of a certificate (or `openssl crl -hash`).
func (b *builder) hash(kind, file string) string {
	return strings.TrimSpace(b.run("openssl", kind, "-hash", "-noout", "-in", file))
}

// installCA copies CA certificates and CRLs into a CA directory under
// their hashed names, as the IGTF distribution lays them out.
func (b *builder) installCA(dir string, cas []*testCA, crls ...string) {
	if b.err == nil {
		b.err = os.MkdirAll(dir, 0o755)
	}
	for _, ca := range cas {
		b.copyTo(ca.cert, filepath.Join(dir, b.hash("x509", ca.cert)+".0"))
	}
	for _, crl := range crls {
		b.copyTo(crl, filepath.Join(dir, b.hash("crl", crl)+".r0"))
	}
}

func (b *builder) mkdir(dir string) {
	if b.err == nil {
		b.err = os.MkdirAll(dir, 0o755)
	}
}

func (b *builder) copyTo(src, dst string) {
	if b.err != nil {
		return
	}
	data, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(dst, data, 0o644)
	}
	b.err = err
}

// opensslProxy has issuer sign an RFC 3820 proxy with the profile; the
// subject is the issuer's plus a CN unless given. The result's chain is
// the proxy, its key, then the issuer's chain: a proxy file.
func (b *builder) opensslProxy(issuer cred, profile string, subject ...string) cred {
	id := b.unique("proxy")
	serial := fmt.Sprint(100000 + b.n)
	subj := issuer.subject + "/CN=" + serial
	if len(subject) > 0 {
		subj = subject[0]
	}
	c := cred{cert: b.path(id + ".pem"), key: b.path(id + ".key"), subject: subj}
	csr := b.path(id + ".csr")
	b.run("openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
		"-keyout", c.key, "-out", csr, "-subj", subj, "-config", b.path("ext.cnf"))
	b.run("openssl", "x509", "-req", "-in", csr, "-CA", issuer.cert, "-CAkey", issuer.key, "-set_serial", serial,
		"-days", "1", "-extfile", b.path("ext.cnf"), "-extensions", profile, "-out", c.cert)
	c.chain = b.cat(id+"-file.pem", c.cert, c.key, issuer.chain)
	return c
}

// globusProxy makes a proxy with grid-proxy-init; mode is -rfc or -old,
// extra are further options (-limited).
func (b *builder) globusProxy(user cred, caDir, mode string, extra ...string) cred {
	out := b.path(b.unique("globus") + ".pem")
	args := append([]string{"-q", mode, "-cert", user.cert, "-key", user.key, "-certdir", caDir, "-bits", "1024", "-out", out}, extra...)
	b.run("grid-proxy-init", args...)
	return cred{chain: out, cert: out, key: out, subject: b.subjectOf(out)}
}

// vomsProxy makes a VOMS proxy with voms-proxy-fake, signed as the
// VOMS server server; extra are further options (-pastac, -hours…).
func (b *builder) vomsProxy(user, server cred, caDir, vo, host string, fqans []string, extra ...string) cred {
	out := b.path(b.unique("voms") + ".pem")
	args := []string{"-q", "-rfc", "-cert", user.cert, "-key", user.key, "-certdir", caDir,
		"-hostcert", server.cert, "-hostkey", server.key, "-voms", vo, "-uri", host + ":15000", "-bits", "1024", "-out", out}
	for _, f := range fqans {
		args = append(args, "-fqan", f)
	}
	b.run("voms-proxy-fake", append(args, extra...)...)
	return cred{chain: out, cert: out, key: out, subject: b.subjectOf(out)}
}

// lsc writes vomsdir/<vo>/<host>.lsc naming the VOMS server certificate.
func (b *builder) lsc(vomsDir, vo, host, serverDN, caDN string) {
	if b.err == nil {
		b.err = os.MkdirAll(filepath.Join(vomsDir, vo), 0o755)
	}
	if b.err == nil {
		b.err = os.WriteFile(filepath.Join(vomsDir, vo, host+".lsc"), []byte(serverDN+"\n"+caDN+"\n"), 0o644)
	}
}

// requireTools skips a test when a tool is missing; scripts/setup.sh
// installs them all.
func requireTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing: run scripts/setup.sh", tool)
			}
			t.Skipf("%s is missing: run scripts/setup.sh", tool)
		}
	}
}

func toolsPresent(tools ...string) bool {
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			return false
		}
	}
	return true
}

// readPEM reads a test file.
func readPEM(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// ago and ahead give `openssl ca -startdate/-enddate` times.
func ago(d time.Duration) string   { return time.Now().Add(-d).UTC().Format("20060102150405Z") }
func ahead(d time.Duration) string { return time.Now().Add(d).UTC().Format("20060102150405Z") }
