package x509grid

import (
	"crypto/x509"
	"encoding/asn1"
	"math"
	"math/big"
)

// Object identifiers of RFC 3820 and of Globus' proxies.
const (
	oidProxyCertInfo      = "1.3.6.1.5.5.7.1.14"
	oidProxyCertInfoGT3   = "1.3.6.1.4.1.3536.1.222"
	oidPolicyInheritAll   = "1.3.6.1.5.5.7.21.1"
	oidPolicyIndependent  = "1.3.6.1.5.5.7.21.2"
	oidPolicyLimitedProxy = "1.3.6.1.4.1.3536.1.1.1.9"
)

type proxyKind int

const (
	notProxy proxyKind = iota
	proxyRFC3820
	// proxyGT2 is the Globus legacy proxy: no extension, the last CN
	// "proxy" or "limited proxy".
	proxyGT2
	// proxyGT3 is Globus' pre-RFC draft, with proxyCertInfo under
	// another OID and another encoding.
	proxyGT3
)

// proxyInfo is what a proxy certificate says about itself.
type proxyInfo struct {
	kind proxyKind
	// pathLen is how many proxies may follow this one (-1: no limit).
	pathLen int
	limited bool
}

// classify tells a proxy from an end-entity certificate: a certificate
// is a proxy if it carries proxyCertInfo (under either OID) or, Globus'
// legacy way, if its name is its issuer's plus CN=proxy or CN=limited
// proxy. The proxyCertInfo's own rules are checked here; the rest of
// RFC 3820's in checkProxy.
func classify(c *x509.Certificate, subject name) (proxyInfo, error) {
	for _, ext := range c.Extensions {
		switch ext.Id.String() {
		case oidProxyCertInfo:
			if !ext.Critical {
				return proxyInfo{}, reason(ErrProxy, "proxyCertInfo is not marked critical")
			}
			info, err := parseProxyCertInfo(ext.Value)
			if err != nil {
				return proxyInfo{}, err
			}
			info.kind = proxyRFC3820
			return info, nil
		case oidProxyCertInfoGT3:
			return proxyInfo{kind: proxyGT3}, reason(ErrLegacyProxy, "a Globus GT3 (draft) proxy")
		}
	}
	cn, ok := subject.lastIsSingleCN()
	if !ok || (cn != "proxy" && cn != "limited proxy") {
		return proxyInfo{kind: notProxy}, nil
	}
	issuer, err := parseName(c.RawIssuer)
	if err != nil || !sameNames(subject[:len(subject)-1], issuer) {
		return proxyInfo{kind: notProxy}, nil
	}
	return proxyInfo{kind: proxyGT2, pathLen: -1, limited: cn == "limited proxy"}, nil
}

// parseProxyCertInfo reads RFC 3820's
//
//	ProxyCertInfo ::= SEQUENCE {
//	    pCPathLenConstraint INTEGER (0..MAX) OPTIONAL,
//	    proxyPolicy ProxyPolicy }
//	ProxyPolicy ::= SEQUENCE {
//	    policyLanguage OBJECT IDENTIFIER,
//	    policy OCTET STRING OPTIONAL }
//
// and accepts the policy languages whose meaning is known: inherit all
// of the issuer's rights, or Globus' limited proxy (inherit all, but no
// job submission). An independent proxy carries none of its issuer's
// rights, and a proxy of any other language rights this package cannot
// interpret: both are refused rather than taken for their issuer.
func parseProxyCertInfo(der []byte) (proxyInfo, error) {
	var elems []asn1.RawValue
	if rest, err := asn1.Unmarshal(der, &elems); err != nil || len(rest) != 0 || len(elems) == 0 || len(elems) > 2 {
		return proxyInfo{}, reason(ErrProxy, "unreadable proxyCertInfo")
	}
	info := proxyInfo{pathLen: -1}
	if len(elems) == 2 {
		n := new(big.Int)
		if rest, err := asn1.Unmarshal(elems[0].FullBytes, &n); err != nil || len(rest) != 0 || n.Sign() < 0 {
			return proxyInfo{}, reason(ErrProxy, "unreadable proxyCertInfo path length")
		}
		// A length beyond any chain this package accepts limits nothing.
		if n.IsInt64() && n.Int64() <= math.MaxInt32 {
			info.pathLen = int(n.Int64())
		}
	}
	var policy struct {
		Language asn1.ObjectIdentifier
		Policy   []byte `asn1:"optional"`
	}
	if rest, err := asn1.Unmarshal(elems[len(elems)-1].FullBytes, &policy); err != nil || len(rest) != 0 {
		return proxyInfo{}, reason(ErrProxy, "unreadable proxyCertInfo policy")
	}
	switch lang := policy.Language.String(); lang {
	case oidPolicyInheritAll:
	case oidPolicyLimitedProxy:
		info.limited = true
	case oidPolicyIndependent:
		return proxyInfo{}, reason(ErrProxy, "an independent proxy (policy language %s) carries none of its issuer's rights", lang)
	default:
		return proxyInfo{}, reason(ErrProxy, "policy language %s is not understood", lang)
	}
	return info, nil
}

// checkProxy applies RFC 3820's rules to proxy p, issued by the next
// certificate up the chain (an end-entity certificate or a proxy).
func (v *Verifier) checkProxy(p, issuer *link) error {
	if issuer.isCA() {
		return reason(ErrProxy, "issued by %s, a CA certificate: only end-entity certificates and proxies issue proxies", issuer.subject)
	}
	if !sameName(p.cert.RawIssuer, issuer.cert.RawSubject) {
		return reason(ErrProxy, "its issuer name is not the subject of the next certificate, %s", issuer.subject)
	}
	cn, ok := p.name.lastIsSingleCN()
	if !ok || len(p.name) != len(issuer.name)+1 || !sameNames(p.name[:len(issuer.name)], issuer.name) {
		return reason(ErrProxy, "its subject is not its issuer's name plus one CN")
	}
	if p.proxy.kind == proxyGT2 && cn != "proxy" && cn != "limited proxy" {
		return reason(ErrProxy, "a legacy proxy's CN must be \"proxy\" or \"limited proxy\"")
	}
	if err := checkSignedBy(p.cert, issuer.cert); err != nil {
		return err
	}
	c := p.cert
	if c.BasicConstraintsValid && c.IsCA {
		return reason(ErrProxy, "a proxy may not be a CA (basic constraints CA:TRUE)")
	}
	if c.KeyUsage&x509.KeyUsageCertSign != 0 {
		return reason(ErrProxy, "a proxy may not have key usage keyCertSign")
	}
	ic := issuer.cert
	if ic.KeyUsage != 0 && ic.KeyUsage&x509.KeyUsageDigitalSignature == 0 {
		return reason(ErrProxy, "its issuer %s lacks key usage digitalSignature, which signing a proxy needs", issuer.subject)
	}
	return checkCriticalExtensions(c, true)
}

// sameNames compares parsed names by their canonical encodings.
func sameNames(a, b name) bool {
	ca, err1 := a.canonical()
	cb, err2 := b.canonical()
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}

// proxyPathLength walks the proxies from the one the end-entity
// certificate issued down to the leaf, each proxyCertInfo path length
// bounding how many proxies may follow it. It returns the index of the
// first proxy too many, or -1.
func proxyPathLength(proxies []*link) int {
	remaining := -1 // no limit yet
	for k := len(proxies) - 1; k >= 0; k-- {
		if remaining == 0 {
			return k
		}
		if remaining > 0 {
			remaining--
		}
		if pl := proxies[k].proxy.pathLen; pl >= 0 && (remaining < 0 || pl < remaining) {
			remaining = pl
		}
	}
	return -1
}
