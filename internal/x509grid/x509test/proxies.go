package x509test

import (
	"fmt"
	"os"
	"path/filepath"
)

// OpenSSLProxy has issuer sign an RFC 3820 proxy with the profile (of
// ExtensionsConf); the subject is the issuer's plus a CN unless given.
// The result's Chain is a proxy file: the proxy, its key, then the
// issuer's chain.
// Its key is P-256, quick to make; RSAProxy is the same with an RSA key.
func (b *Builder) OpenSSLProxy(issuer Cred, profile string, subject ...string) Cred {
	return b.openSSLProxy(issuer, profile, true, subject)
}

// RSAProxy is OpenSSLProxy with an RSA key of Bits, as gsi needs (its
// exchange signs with the proxy's key in RSA's raw PKCS #1 form).
func (b *Builder) RSAProxy(issuer Cred, profile string, subject ...string) Cred {
	return b.openSSLProxy(issuer, profile, false, subject)
}

func (b *Builder) openSSLProxy(issuer Cred, profile string, ec bool, subject []string) Cred {
	id := b.Unique("proxy")
	serial := fmt.Sprint(100000 + b.n)
	subj := issuer.Subject + "/CN=" + serial
	if len(subject) > 0 {
		subj = subject[0]
	}
	c := Cred{Cert: b.Path(id + ".pem"), Key: b.NewKey(id, ec), Subject: subj}
	csr := b.Path(id + ".csr")
	b.Run("openssl", "req", "-new", "-key", c.Key, "-out", csr, "-subj", subj, "-config", b.Path("ext.cnf"))
	b.Run("openssl", "x509", "-req", "-in", csr, "-CA", issuer.Cert, "-CAkey", issuer.Key, "-set_serial", serial,
		"-days", "1", "-extfile", b.Path("ext.cnf"), "-extensions", profile, "-out", c.Cert)
	c.Chain = b.Cat(id+"-file.pem", c.Cert, c.Key, issuer.Chain)
	return c
}

// GlobusProxy makes a proxy with grid-proxy-init; mode is -rfc or -old,
// extra are further options (-limited, -valid H:M).
func (b *Builder) GlobusProxy(user Cred, caDir, mode string, extra ...string) Cred {
	out := b.Path(b.Unique("globus") + ".pem")
	args := append([]string{"-q", mode, "-cert", user.Cert, "-key", user.Key, "-certdir", caDir, "-bits", b.bits(), "-out", out}, extra...)
	b.Run("grid-proxy-init", args...)
	return Cred{Chain: out, Cert: out, Key: out, Subject: b.SubjectOf(out)}
}

// VOMSProxy makes a VOMS proxy with voms-proxy-fake, its attribute
// certificate signed as the VOMS server server of vo at host:15000;
// extra are further options (-pastac, -hours, -limited…).
func (b *Builder) VOMSProxy(user, server Cred, caDir, vo, host string, fqans []string, extra ...string) Cred {
	out := b.Path(b.Unique("voms") + ".pem")
	args := []string{"-q", "-rfc", "-cert", user.Cert, "-key", user.Key, "-certdir", caDir,
		"-hostcert", server.Cert, "-hostkey", server.Key, "-voms", vo, "-uri", host + ":15000", "-bits", b.bits(), "-out", out}
	for _, f := range fqans {
		args = append(args, "-fqan", f)
	}
	b.Run("voms-proxy-fake", append(args, extra...)...)
	return Cred{Chain: out, Cert: out, Key: out, Subject: b.SubjectOf(out)}
}

// LSC writes vomsdir/<vo>/<host>.lsc naming the VOMS server certificate
// (its subject, then its CA's).
func (b *Builder) LSC(vomsDir, vo, host, serverDN, caDN string) {
	b.Mkdir(filepath.Join(vomsDir, vo))
	if b.err == nil {
		b.err = os.WriteFile(filepath.Join(vomsDir, vo, host+".lsc"), []byte(serverDN+"\n"+caDN+"\n"), 0o644)
	}
}
