package x509grid

import (
	"crypto/x509"
	"time"
)

// Result is who a verified chain identifies and what VOMS says of them.
type Result struct {
	// Subject is the end-entity (user) certificate's name in slash form,
	// "/DC=org/DC=example/CN=Alice", as grid tools print it; Issuer is its
	// CA's.
	Subject string
	Issuer  string
	// Proxies is how many proxy certificates preceded the end-entity
	// certificate (0: the end-entity certificate alone).
	Proxies int
	// Limited is set when any proxy of the chain is a limited proxy
	// (id-ppl-limitedProxy, or a legacy "CN=limited proxy"): Globus and
	// xrootd let such a proxy read and write data but not submit jobs.
	Limited bool
	// Expires is the earliest end of validity of every certificate of the
	// chain (CAs included) and of every accepted attribute certificate.
	Expires time.Time
	// Chain is the verified chain: the presented proxies and end-entity
	// certificate, leaf first, then the CA path from the CA directory up
	// to its root. CA certificates the client sent along are not in it.
	Chain []*x509.Certificate
	// VOs are the VOs whose attribute certificates were accepted, in the
	// order of the VOMS extension (the first is the primary VO).
	VOs []VO
	// RejectedACs are the attribute certificates not accepted, each with
	// its reason; their VOs are not in VOs.
	RejectedACs []*ACError
	// Warnings are things accepted but worth an operator's attention (a
	// CA's CRL past its next update under crl = try).
	Warnings []string
}

// VO is one VO's attributes, from an accepted VOMS attribute certificate.
type VO struct {
	// Name is the VO ("cms").
	Name string
	// Server is the VOMS server's certificate name (slash form) and URI
	// its "host:port", as the AC states it.
	Server string
	URI    string
	// FQANs in the order the VOMS server issued them: the first is the
	// primary group and role.
	FQANs []FQAN
	// NotBefore and NotAfter bound the AC's validity.
	NotBefore, NotAfter time.Time
}

// FQAN is a fully qualified attribute name, "/cms/uscms/Role=production/
// Capability=NULL": a group and, optionally, a role in it.
type FQAN struct {
	// Value is the FQAN as the VOMS server wrote it.
	Value string
	// Group is the group path ("/cms/uscms"); its first component is the
	// VO.
	Group string
	// Role is the role ("production"), empty for none ("Role=NULL" or no
	// role written); Capability likewise (deprecated, always NULL today).
	Role       string
	Capability string
}

// Groups lists the groups of every accepted VO's FQANs, each once, in
// order: what a token's wlcg.groups would carry.
func (r *Result) Groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, vo := range r.VOs {
		for _, f := range vo.FQANs {
			if !seen[f.Group] {
				seen[f.Group] = true
				out = append(out, f.Group)
			}
		}
	}
	return out
}
