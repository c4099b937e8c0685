package x509test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Cred is a certificate file and its key. For a proxy, Chain is a proxy
// file: the proxy, its key, then the issuer's chain (the user
// certificate last), as grid-proxy-init writes one.
type Cred struct {
	Chain   string // PEM certificates, leaf first
	Cert    string // PEM, the leaf first
	Key     string
	Subject string // the leaf's, slash form
}

// CA is a CA run with `openssl ca`, so it can revoke and issue CRLs.
type CA struct {
	Cred
	Conf string // its `openssl ca` configuration
}

// ExtensionsConf holds every extension profile the fixtures issue with:
// v3_ca, v3_user, v3_host, v3_host_local (a host certificate for
// localhost and 127.0.0.1), and the proxy profiles (proxy,
// proxy_limited, proxy_pathlen0, proxy_independent, proxy_noncritical,
// proxy_certsign, proxy_unknown_critical).
const ExtensionsConf = `
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
[v3_host_local]
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
` + ExtensionsConf

// NewKey makes a key: RSA of Bits (what the grid tools expect), or P-256.
func (b *Builder) NewKey(name string, ec bool) string {
	key := b.Path(name + ".key")
	if ec {
		b.Run("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", key)
	} else {
		b.Run("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:"+b.bits(), "-out", key)
	}
	return key
}

// NewRootCA makes a self-signed CA in the directory id.
func (b *Builder) NewRootCA(id, subject string, ec bool) *CA {
	ca := b.CADir(id, subject, ec)
	b.Run("openssl", "req", "-x509", "-new", "-key", ca.Key, "-out", ca.Cert, "-subj", subject,
		"-days", "60", "-set_serial", "1", "-config", ca.Conf, "-extensions", "v3_ca")
	ca.Chain, ca.Subject = ca.Cert, subject
	return ca
}

// NewSubCA makes a CA issued by parent.
func (b *Builder) NewSubCA(parent *CA, id, subject string) *CA {
	ca := b.CADir(id, subject, false)
	csr := b.Path(id + ".csr")
	b.Run("openssl", "req", "-new", "-key", ca.Key, "-out", csr, "-subj", subject, "-config", ca.Conf)
	b.Run("openssl", "ca", "-batch", "-config", parent.Conf, "-extensions", "v3_ca", "-preserveDN",
		"-days", "45", "-in", csr, "-out", ca.Cert)
	ca.Chain, ca.Subject = ca.Cert, subject
	return ca
}

// CADir makes the directory of a CA (its key, database and
// configuration) without its certificate.
func (b *Builder) CADir(id, subject string, ec bool) *CA {
	dir := b.Path(id)
	if b.err == nil {
		b.err = os.Mkdir(dir, 0o700)
	}
	ca := &CA{}
	ca.Cert, ca.Key = filepath.Join(dir, "ca.pem"), b.NewKey(id+"/ca", ec)
	ca.Conf = b.Write(id+"/openssl.cnf", fmt.Sprintf(caConf, dir))
	b.Write(id+"/index.txt", "")
	b.Write(id+"/serial", "1000\n")
	b.Write(id+"/crlnumber", "01\n")
	return ca
}

// Issue has ca sign a certificate for subject with the extension
// profile; extra are `openssl ca` options (-startdate, -enddate).
func (b *Builder) Issue(ca *CA, id, subject, profile string, extra ...string) Cred {
	c := Cred{Cert: b.Path(id + ".pem"), Key: b.NewKey(id, false)}
	csr := b.Path(id + ".csr")
	b.Run("openssl", "req", "-new", "-key", c.Key, "-out", csr, "-subj", subject, "-config", ca.Conf)
	args := append([]string{"ca", "-batch", "-notext", "-config", ca.Conf, "-extensions", profile, "-preserveDN",
		"-in", csr, "-out", c.Cert}, extra...)
	b.Run("openssl", args...)
	c.Chain, c.Subject = c.Cert, subject
	return c
}

// Revoke records c as revoked by ca, for the next CRL; why is an
// `openssl ca -crl_reason`.
func (b *Builder) Revoke(ca *CA, c Cred, why string) {
	b.Run("openssl", "ca", "-config", ca.Conf, "-revoke", c.Cert, "-crl_reason", why)
}

// CRL writes ca's CRL; extra are `openssl ca -gencrl` options.
func (b *Builder) CRL(ca *CA, extra ...string) string {
	out := b.Path(b.Unique("crl") + ".pem")
	b.Run("openssl", append([]string{"ca", "-gencrl", "-config", ca.Conf, "-out", out}, extra...)...)
	return out
}

// SubjectOf is the first certificate's subject in slash form, as
// OpenSSL's X509_NAME_oneline writes it.
func (b *Builder) SubjectOf(file string) string {
	out := strings.TrimSuffix(b.Run("openssl", "x509", "-in", file, "-noout", "-subject", "-nameopt", "compat"), "\n")
	return strings.TrimPrefix(out, "subject=")
}

// Hash is `openssl x509 -hash` of a certificate (kind "x509") or
// `openssl crl -hash` of a CRL (kind "crl").
func (b *Builder) Hash(kind, file string) string {
	return strings.TrimSpace(b.Run("openssl", kind, "-hash", "-noout", "-in", file))
}

// InstallCA copies CA certificates and CRLs into a CA directory under
// their hashed names, as the IGTF distribution lays them out.
func (b *Builder) InstallCA(dir string, cas []*CA, crls ...string) {
	b.Mkdir(dir)
	for _, ca := range cas {
		b.CopyTo(ca.Cert, filepath.Join(dir, b.Hash("x509", ca.Cert)+".0"))
	}
	for _, crl := range crls {
		b.CopyTo(crl, filepath.Join(dir, b.Hash("crl", crl)+".r0"))
	}
}
