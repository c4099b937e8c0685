package x509grid

import (
	"crypto/x509"
	"fmt"
	"time"
)

// VerifyPEM verifies a chain in PEM, leaf first, as a proxy file or
// XRootD's gsi protocol carries it (the proxy, any further proxies, the
// user certificate); blocks other than CERTIFICATE (the proxy's key) are
// skipped.
func (v *Verifier) VerifyPEM(data []byte, at time.Time) (*Result, error) {
	if len(data) > v.lim.MaxInput {
		return nil, fmt.Errorf("%w: %d bytes of PEM (limit %d)", ErrMalformed, len(data), v.lim.MaxInput)
	}
	certs, err := parseCertsPEM(data, v.lim.MaxChain, v.lim.MaxCertSize)
	if err != nil {
		return nil, err
	}
	return v.Verify(certs, at)
}

// VerifyDER verifies a chain of DER certificates, leaf first, as a TLS
// client presents it.
func (v *Verifier) VerifyDER(raw [][]byte, at time.Time) (*Result, error) {
	if len(raw) > v.lim.MaxChain {
		return nil, fmt.Errorf("%w: %d certificates (limit %d)", ErrMalformed, len(raw), v.lim.MaxChain)
	}
	total := 0
	certs := make([]*x509.Certificate, 0, len(raw))
	for i, der := range raw {
		if total += len(der); len(der) > v.lim.MaxCertSize || total > v.lim.MaxInput {
			return nil, fmt.Errorf("%w: certificate %d makes the chain too large", ErrMalformed, i)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("%w: certificate %d: %v", ErrMalformed, i, err)
		}
		certs = append(certs, c)
	}
	return v.Verify(certs, at)
}

// Verify checks a chain at time at. chain[0] is the certificate whose
// key the client proved it holds (the last proxy, or the end-entity
// certificate when no proxy is used); each next certificate issued the
// one before it, up to the end-entity certificate. CA certificates after
// it are ignored: CAs come from the CA directory only.
//
// The chain is refused with a *CertError naming the first certificate at
// fault. An accepted chain's VOMS attribute certificates are checked
// next; those refused are listed in Result.RejectedACs and do not refuse
// the chain.
func (v *Verifier) Verify(chain []*x509.Certificate, at time.Time) (*Result, error) {
	links, err := v.presented(chain)
	if err != nil {
		return nil, err
	}
	ee, err := v.findEndEntity(links)
	if err != nil {
		return nil, err
	}
	proxies, eec := links[:ee], links[ee]
	if err := checkEndEntity(eec, len(proxies) > 0); err != nil {
		return nil, eec.fail(err)
	}
	if err := v.inValidity(eec.cert.NotBefore, eec.cert.NotAfter, at); err != nil {
		return nil, eec.fail(err)
	}
	path, warnings, err := v.caPath(eec, at)
	if err != nil {
		return nil, err
	}
	for k := len(proxies) - 1; k >= 0; k-- {
		if err := v.checkProxy(proxies[k], links[k+1]); err != nil {
			return nil, proxies[k].fail(err)
		}
		if err := v.inValidity(proxies[k].cert.NotBefore, proxies[k].cert.NotAfter, at); err != nil {
			return nil, proxies[k].fail(err)
		}
	}
	if k := proxyPathLength(proxies); k >= 0 {
		return nil, proxies[k].fail(reason(ErrPathLength, "one proxy more than the proxyCertInfo path lengths above it allow"))
	}
	res := newResult(links[:ee+1], path, warnings)
	v.addVOMS(res, links[:ee+1], at)
	return res, nil
}

// presented wraps the chain's certificates, refusing empty, long and
// oversized chains and unreadable names.
func (v *Verifier) presented(chain []*x509.Certificate) ([]*link, error) {
	if len(chain) == 0 {
		return nil, fmt.Errorf("%w: no certificate", ErrMalformed)
	}
	if len(chain) > v.lim.MaxChain {
		return nil, fmt.Errorf("%w: %d certificates (limit %d)", ErrMalformed, len(chain), v.lim.MaxChain)
	}
	links := make([]*link, len(chain))
	for i, c := range chain {
		if c == nil {
			return nil, fmt.Errorf("%w: certificate %d is missing", ErrMalformed, i)
		}
		if len(c.Raw) > v.lim.MaxCertSize {
			return nil, fmt.Errorf("%w: certificate %d has %d bytes (limit %d)", ErrMalformed, i, len(c.Raw), v.lim.MaxCertSize)
		}
		l, err := newLink(c, i)
		if err != nil {
			return nil, &CertError{Position: i, Subject: "?", Err: fmt.Errorf("%w: %v", ErrMalformed, err)}
		}
		links[i] = l
	}
	return links, nil
}

// findEndEntity classifies the certificates from the leaf up: proxies,
// then one end-entity certificate, then only CA certificates (ignored).
// It returns the end-entity certificate's index.
func (v *Verifier) findEndEntity(links []*link) (int, error) {
	ee := 0
	for ; ee < len(links); ee++ {
		l := links[ee]
		info, err := classify(l.cert, l.name)
		if err != nil {
			return 0, l.fail(err)
		}
		if info.kind == notProxy {
			break
		}
		if info.kind == proxyGT2 && !v.cfg.AllowLegacyProxies {
			return 0, l.fail(reason(ErrLegacyProxy, "a Globus GT2 proxy (CN=%s, no proxyCertInfo)", lastCN(l.name)))
		}
		l.proxy = info
	}
	if ee == len(links) {
		return 0, links[ee-1].fail(reason(ErrProxy, "no end-entity certificate follows the proxy"))
	}
	for _, l := range links[ee+1:] {
		if !l.isCA() {
			return 0, l.fail(reason(ErrNotEndEntity, "a second end-entity certificate after %s", links[ee].subject))
		}
	}
	return ee, nil
}

func lastCN(n name) string {
	cn, _ := n.lastIsSingleCN()
	return cn
}

// newResult gathers the identity of a verified chain: the presented
// certificates up to the end-entity's, then the CA path.
func newResult(presented []*link, path []*caCert, warnings []string) *Result {
	eec := presented[len(presented)-1]
	issuer, _ := SlashName(eec.cert.RawIssuer)
	res := &Result{Subject: eec.subject, Issuer: issuer, Proxies: len(presented) - 1, Warnings: warnings}
	for _, l := range presented {
		res.Chain = append(res.Chain, l.cert)
		res.Limited = res.Limited || l.proxy.limited
	}
	for _, ca := range path {
		res.Chain = append(res.Chain, ca.cert)
	}
	for _, c := range res.Chain {
		res.Expires = earliest(res.Expires, c.NotAfter)
	}
	return res
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}
