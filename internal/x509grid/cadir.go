package x509grid

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// caCert is one CA certificate of the CA directory.
type caCert struct {
	cert    *x509.Certificate
	file    string // base name, for messages
	subject string // slash form
	key     string // canonical subject
	// selfSigned: issuer and subject are the same name and the
	// certificate's own key verifies its signature: a trust anchor.
	selfSigned bool
}

// caDir is the CA directory as read: CA certificates by canonical
// subject, and the CRLs by canonical issuer.
type caDir struct {
	bySubject map[string][]*caCert
	crls      map[string]*crlSet
	count     int
	warnings  []string
}

func (d *caDir) warnf(format string, args ...any) {
	d.warnings = append(d.warnings, fmt.Sprintf(format, args...))
}

// loadCADir reads the <hash>.N certificates and, with crls, the
// <hash>.rN CRLs of dir; other files (.signing_policy, .namespaces,
// .info, the named .pem copies) are not read, as OpenSSL's hashed
// directory lookup does not read them.
func loadCADir(dir string, crls bool, lim Limits) (*caDir, error) {
	names, truncated, err := listDir(dir, lim.MaxCADirFiles)
	if err != nil {
		return nil, err
	}
	d := &caDir{bySubject: map[string][]*caCert{}, crls: map[string]*crlSet{}}
	if truncated {
		d.warnf("%s: more than %d entries; only the first %d (by name) are read", dir, lim.MaxCADirFiles, lim.MaxCADirFiles)
	}
	var crlFiles []string
	for _, n := range names {
		hash, isCRL, ok := hashedFileName(n)
		switch {
		case !ok:
		case isCRL:
			crlFiles = append(crlFiles, n)
		default:
			d.loadCertFile(filepath.Join(dir, n), hash, lim)
		}
	}
	if crls {
		for _, n := range crlFiles {
			d.loadCRLFile(filepath.Join(dir, n), lim)
		}
	}
	return d, nil
}

// listDir returns up to max entry names of dir, sorted.
func listDir(dir string, max int) (names []string, truncated bool, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	ents, err := f.ReadDir(max + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) > max {
		return names[:max], true, nil
	}
	return names, false, nil
}

// hashedFileName recognises "1a2b3c4d.0" (a certificate) and
// "1a2b3c4d.r0" (a CRL).
func hashedFileName(n string) (hash uint32, isCRL, ok bool) {
	base, suffix, found := strings.Cut(n, ".")
	if !found || len(base) != 8 || strings.ToLower(base) != base {
		return 0, false, false
	}
	h, err := strconv.ParseUint(base, 16, 32)
	if err != nil {
		return 0, false, false
	}
	isCRL = strings.HasPrefix(suffix, "r")
	digits := strings.TrimPrefix(suffix, "r")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false, false
	}
	return uint32(h), isCRL, true
}

// readBounded reads a regular file of at most max bytes.
func readBounded(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if st.Size() > int64(max) {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return b, nil
}

func (d *caDir) loadCertFile(path string, hash uint32, lim Limits) {
	base := filepath.Base(path)
	data, err := readBounded(path, lim.MaxCADirFileSize)
	if err != nil {
		d.warnf("%s: %v", base, err)
		return
	}
	certs, err := parseCertsPEM(data, lim.MaxChain, lim.MaxCertSize)
	if err != nil || len(certs) == 0 {
		d.warnf("%s: no certificate read: %v", base, err)
		return
	}
	for _, c := range certs {
		h, err := SubjectHash(c.RawSubject)
		switch {
		case err != nil:
			d.warnf("%s: %v", base, err)
			continue
		case h != hash && SubjectHashOld(c.RawSubject) == hash:
			continue // the same CA linked under its pre-1.0 hash: read under the new one
		case h != hash:
			d.warnf("%s: a certificate whose subject hash is %08x, not the file's name: skipped", base, h)
			continue
		}
		ca, err := newCACert(c, base)
		if err != nil {
			d.warnf("%s: %v", base, err)
			continue
		}
		if len(d.bySubject[ca.key]) >= lim.MaxIssuers {
			d.warnf("%s: more than %d CA certificates named %s: skipped", base, lim.MaxIssuers, ca.subject)
			continue
		}
		d.bySubject[ca.key] = append(d.bySubject[ca.key], ca)
		d.count++
	}
}

func newCACert(c *x509.Certificate, file string) (*caCert, error) {
	subj, err := parseName(c.RawSubject)
	if err != nil {
		return nil, err
	}
	key, err := subj.canonical()
	if err != nil {
		return nil, err
	}
	ca := &caCert{cert: c, file: file, subject: subj.slash(), key: string(key)}
	// A root's self-signature is what makes it a root, not what makes it
	// trusted (its place in the directory does): SHA-1 self-signatures of
	// old roots are accepted here.
	ca.selfSigned = sameName(c.RawSubject, c.RawIssuer) &&
		c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature) == nil
	return ca, nil
}

// parseCertsPEM reads the CERTIFICATE blocks of PEM data, skipping
// other blocks (a proxy file holds the proxy's key), at most max of
// them, each at most maxSize bytes of DER.
func parseCertsPEM(data []byte, max, maxSize int) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	// Blocks of other types count too, so junk cannot make this loop long.
	for blocks := 0; ; blocks++ {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if blocks >= 2*max+2 {
			return nil, fmt.Errorf("%w: more than %d PEM blocks", ErrMalformed, 2*max+2)
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if len(certs) == max {
			return nil, fmt.Errorf("%w: more than %d certificates", ErrMalformed, max)
		}
		if len(b.Bytes) > maxSize {
			return nil, fmt.Errorf("%w: a certificate of %d bytes (limit %d)", ErrMalformed, len(b.Bytes), maxSize)
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: certificate %d: %v", ErrMalformed, len(certs), err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}
