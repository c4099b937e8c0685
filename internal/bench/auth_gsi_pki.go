package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// gsiBenchVO is the VO of the measured proxy.
const gsiBenchVO = "benchvo"

// gridFiles are a throwaway grid for the gsi rows: a CA directory and a
// vomsdir, a host certificate for localhost, and a user's VOMS proxy,
// all with 2048-bit RSA keys, made with openssl and voms-proxy-fake.
type gridFiles struct {
	caDir, vomsDir    string
	hostCert, hostKey string
	proxy             string
}

// gridProfiles are the extensions of the grid's certificates.
const gridProfiles = `[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical,CA:true
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[user]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
[host]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth,clientAuth
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost
`

// makeGrid writes the grid below dir.
func makeGrid(ctx context.Context, dir string) (*gridFiles, error) {
	g := &gridFiles{caDir: filepath.Join(dir, "certificates"), vomsDir: filepath.Join(dir, "vomsdir")}
	mk := gridMaker{ctx: ctx, dir: dir}
	mk.mkdir(g.caDir, filepath.Join(g.vomsDir, gsiBenchVO))
	mk.write("profiles.cnf", gridProfiles)
	const caDN = "/DC=org/DC=bench/CN=Bench CA"
	ca, caKey := mk.path("ca.pem"), mk.key("ca")
	mk.run("openssl", "req", "-x509", "-new", "-key", caKey, "-out", ca, "-subj", caDN, "-days", "30",
		"-config", mk.path("profiles.cnf"), "-extensions", "ca")
	g.hostCert, g.hostKey = mk.issue(ca, caKey, "host", "/DC=org/DC=bench/CN=localhost", "host")
	user, userKey := mk.issue(ca, caKey, "user", "/DC=org/DC=bench/CN=Bench User", "user")
	voms, vomsKey := mk.issue(ca, caKey, "voms", "/DC=org/DC=bench/CN=voms.bench", "host")
	for _, flag := range []string{"-hash", "-subject_hash_old"} {
		h := strings.TrimSpace(mk.run("openssl", "x509", flag, "-noout", "-in", ca))
		mk.copy(ca, filepath.Join(g.caDir, h+".0"))
	}
	mk.write(filepath.Join("vomsdir", gsiBenchVO, "voms.bench.lsc"), "/DC=org/DC=bench/CN=voms.bench\n"+caDN+"\n")
	g.proxy = mk.path("proxy.pem")
	mk.run("voms-proxy-fake", "-q", "-rfc", "-cert", user, "-key", userKey, "-certdir", g.caDir, "-hostcert", voms, "-hostkey", vomsKey,
		"-voms", gsiBenchVO, "-uri", "voms.bench:15000", "-fqan", "/"+gsiBenchVO+"/Role=NULL/Capability=NULL", "-bits", "2048", "-out", g.proxy)
	if mk.err != nil {
		return nil, fmt.Errorf("bench auth: make the grid credentials: %w", mk.err)
	}
	return g, nil
}

// gridMaker runs the tools in one directory; the first failure sticks
// and every later call does nothing.
type gridMaker struct {
	ctx context.Context
	dir string
	err error
}

func (m *gridMaker) path(name string) string { return filepath.Join(m.dir, name) }

func (m *gridMaker) run(name string, args ...string) string {
	if m.err != nil {
		return ""
	}
	cmd := exec.CommandContext(m.ctx, name, args...)
	cmd.Dir = m.dir
	cmd.Env = append(os.Environ(), "RANDFILE="+m.path(".rnd"))
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		m.err = fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, trimMsg(stderr))
	}
	return string(out)
}

func (m *gridMaker) mkdir(dirs ...string) {
	for _, d := range dirs {
		if m.err == nil {
			m.err = os.MkdirAll(d, 0o755)
		}
	}
}

func (m *gridMaker) write(name, text string) {
	if m.err == nil {
		m.err = os.WriteFile(m.path(name), []byte(text), 0o644)
	}
}

func (m *gridMaker) copy(src, dst string) {
	if m.err != nil {
		return
	}
	data, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(dst, data, 0o644)
	}
	m.err = err
}

// key makes a 2048-bit RSA key readable by its owner only.
func (m *gridMaker) key(name string) string {
	key := m.path(name + ".key")
	m.run("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key)
	if m.err == nil {
		m.err = os.Chmod(key, 0o600)
	}
	return key
}

// issue has the CA sign a certificate for subject with a profile.
func (m *gridMaker) issue(ca, caKey, name, subject, profile string) (cert, key string) {
	cert, key = m.path(name+".pem"), m.key(name)
	csr := m.path(name + ".csr")
	m.run("openssl", "req", "-new", "-key", key, "-out", csr, "-subj", subject, "-config", m.path("profiles.cnf"))
	m.run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-days", "30",
		"-extfile", m.path("profiles.cnf"), "-extensions", profile, "-out", cert)
	return cert, key
}
