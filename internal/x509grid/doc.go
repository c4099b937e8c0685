// Package x509grid verifies grid credentials: X.509 proxy chains (RFC
// 3820) and plain end-entity certificates against a CA directory in the
// grid layout, and the VOMS attribute certificates a proxy carries
// against a vomsdir. XRootD's gsi protocol, client certificates on
// https and proxies presented to upstreams are built on it; crypto/x509
// cannot serve, as it refuses proxy certificates.
//
// A Verifier is made from a Config (the CA directory, the vomsdir, the
// CRL policy) and checks a chain, leaf first, at a given time. The
// Result names the user (the end-entity certificate's DN in slash
// form), whether the chain is limited, its expiry, and per VO the
// FQANs of the accepted attribute certificates. A refusal names the
// certificate (position and subject) and the reason. Proof that the
// client holds the leaf's key is the caller's (the gsi handshake, TLS).
//
// # Chains
//
// From the leaf up: proxies, one end-entity certificate, then nothing
// but CA certificates, which are ignored: CAs come only from the CA
// directory (<subject hash>.0, .1 … as `openssl x509 -hash` names them;
// intermediates included), each checked up to a self-signed root in it.
// A proxy's issuer is the next certificate, which must not be a CA; its
// subject is the issuer's plus one CN; its signature is by the issuer's
// key (digitalSignature, if the issuer has key usage); it is not a CA and
// has no keyCertSign; its proxyCertInfo is critical, its policy language
// inherit-all or limited (an independent proxy, or one of a language not
// understood, is refused rather than taken for the user), and the path
// length constraints of the proxies above it are honoured (xrootd 5.5
// stops checking proxies below an exhausted length; here they are
// refused). Every certificate must be valid at the time given; critical
// extensions other than those crypto/x509 parses and this package
// enforces make a certificate unusable, and a CA with name constraints
// is refused (they are not implemented). MD5 and SHA-1 signatures are
// refused on certificates and attribute certificates, accepted on a
// root's self-signature and on CRLs, which their CAs alone write.
//
// Limited proxies (id-ppl-limitedProxy, or a legacy "CN=limited proxy")
// mark the Result limited, and so does a full proxy below one: OpenSSL
// and xrootd accept such a chain, Globus' rule refuses it. Globus GT2
// proxies ("CN=proxy", no extension) are accepted only with
// Config.AllowLegacyProxies, as xrootd and VOMS accept them and OpenSSL
// does not; GT3 draft proxies never are.
//
// # CRLs
//
// <hash>.r0 files, as xrootd's gsi option -crl: reads them: "try" (the
// default) uses a CA's CRL when there is one, refuses the CA's
// certificates when its CRL does not verify, and reports a CRL past its
// next update in Result.Warnings; "use" also refuses a CA without CRL;
// "require" also refuses a CA whose CRL is out of date; "ignore" reads
// none. A revoked serial is refused with its revocation time and reason.
//
// # VOMS
//
// The attribute certificates of the extension 1.3.6.1.4.1.8005.100.100.5
// of the certificate nearest the leaf that has one (a proxy of a VOMS
// proxy carries none) are checked one by one; a refused AC is listed in
// Result.RejectedACs and its VO does not count, but the chain stands. An
// AC counts if its VOMS server is listed for the AC's VO: by
// <vomsdir>/<vo>/<host>.lsc, the host taken from the AC's "vo://host:port",
// naming the server certificate the AC embeds (subject, then issuer,
// line by line), or by the server's certificate placed in <vomsdir>/<vo>/.
// A certificate at the vomsdir's top, which VOMS trusts for every VO,
// counts for none here: VOs are bound to their servers, as token groups
// are to their issuers. The VOMS server's certificate must chain to the
// CA directory (and pass its CRLs) like a user's; the AC must be signed
// by it, valid, issued to the chain's end-entity certificate (by its
// serial and its issuer's or its own name: a name alone, which any CA
// could issue, is refused, as VOMS refuses it), carry
// noRevAvail and authorityKeyIdentifier and no other critical extension
// than targets, which must then name one of Config.Hostnames; its FQANs
// must all be of its VO.
package x509grid
