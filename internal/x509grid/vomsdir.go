package x509grid

import (
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// vomsDir is the vomsdir as read: per VO, the VOMS servers it trusts.
// Lookups go by VO and host names read from an AC, so they are map keys
// here and never become paths.
type vomsDir struct {
	vos      map[string]*voTrust
	warnings []string
}

// voTrust is what one VO's directory lists.
type voTrust struct {
	// lsc maps a VOMS host ("voms.example.org") to the chains its .lsc
	// file allows: each a list of (subject, issuer) pairs in slash form,
	// the VOMS server's certificate first.
	lsc map[string][]lscChain
	// certs are VOMS server certificates placed in the directory
	// itself, the older way.
	certs []*x509.Certificate
}

type lscChain [][2]string

// lscNextChain separates alternative chains in an .lsc file.
const lscNextChain = "------ NEXT CHAIN ------"

func (d *vomsDir) warnf(format string, args ...any) {
	d.warnings = append(d.warnings, fmt.Sprintf(format, args...))
}

func loadVOMSDir(dir string, lim Limits) (*vomsDir, error) {
	names, truncated, err := listDir(dir, lim.MaxCADirFiles)
	if err != nil {
		return nil, err
	}
	d := &vomsDir{vos: map[string]*voTrust{}}
	if truncated {
		d.warnf("%s: more than %d entries; only the first %d (by name) are read", dir, lim.MaxCADirFiles, lim.MaxCADirFiles)
	}
	for _, vo := range names {
		p := filepath.Join(dir, vo)
		st, err := os.Stat(p)
		switch {
		case err != nil:
			d.warnf("%s: %v", vo, err)
		case st.IsDir():
			d.vos[vo] = d.loadVO(p, vo, lim)
		default:
			// VOMS would trust such a certificate for every VO; here a
			// VOMS server counts only for the VO whose directory lists it.
			d.warnf("%s: not used: a VOMS server is listed in its VO's directory", vo)
		}
	}
	return d, nil
}

func (d *vomsDir) loadVO(dir, vo string, lim Limits) *voTrust {
	t := &voTrust{lsc: map[string][]lscChain{}}
	names, truncated, err := listDir(dir, lim.MaxCADirFiles)
	if err != nil {
		d.warnf("%s: %v", vo, err)
		return t
	}
	if truncated {
		d.warnf("%s: more than %d entries; only the first %d are read", vo, lim.MaxCADirFiles, lim.MaxCADirFiles)
	}
	for _, n := range names {
		data, err := readBounded(filepath.Join(dir, n), lim.MaxCADirFileSize)
		if err != nil {
			d.warnf("%s/%s: %v", vo, n, err)
			continue
		}
		if host, ok := strings.CutSuffix(n, ".lsc"); ok {
			chains, err := parseLSC(string(data))
			if err != nil {
				d.warnf("%s/%s: %v", vo, n, err)
				continue
			}
			t.lsc[host] = chains
			continue
		}
		certs, err := parseCertsPEM(data, lim.MaxACCerts, lim.MaxCertSize)
		if err != nil || len(certs) == 0 {
			d.warnf("%s/%s: neither an .lsc file nor a certificate: skipped", vo, n)
			continue
		}
		t.certs = append(t.certs, certs[0])
	}
	return t
}

// parseLSC reads an .lsc file: pairs of lines, a certificate's subject
// then its issuer, the VOMS server's certificate first; alternative
// chains are separated by a "------ NEXT CHAIN ------" line. Blank lines
// are skipped and surrounding white space and quotes dropped, as VOMS
// does.
func parseLSC(text string) ([]lscChain, error) {
	var chains []lscChain
	var dns []string
	flush := func() error {
		if len(dns) == 0 {
			return nil
		}
		if len(dns)%2 != 0 {
			return fmt.Errorf("an odd number of DNs (%d): each certificate needs its subject and issuer", len(dns))
		}
		var c lscChain
		for i := 0; i < len(dns); i += 2 {
			c = append(c, [2]string{normalizeSlashDN(dns[i]), normalizeSlashDN(dns[i+1])})
		}
		chains = append(chains, c)
		dns = nil
		return nil
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if len(line) >= 2 && line[0] == '"' && line[len(line)-1] == '"' {
			line = line[1 : len(line)-1]
		}
		switch {
		case line == "":
		case line == lscNextChain:
			if err := flush(); err != nil {
				return nil, err
			}
		case !strings.HasPrefix(line, "/"):
			return nil, fmt.Errorf("%q is not a DN in slash form", line)
		default:
			dns = append(dns, line)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(chains) == 0 {
		return nil, fmt.Errorf("no DN")
	}
	return chains, nil
}
