// Package auth decides who a client is and what it may do: the
// Authenticator turns a credential into a store.Identity, a Policy
// decides what an identity may do where, a Guard enforces the policy in
// front of any store.Store, and an Issuer lets a site mint its own
// tokens.
//
// # One entry point for credentials
//
// Every credential enters through Authenticator.Authenticate: root://
// (ztn, krb5, gsi and authz= CGI), https (Bearer, authz=, Negotiate and
// the TLS client certificate), the job API and the dashboard. A frontend
// keeps its protocol's handshake — the ztn and krb5 framing, gsi's
// two-round exchange that proves the client holds its proxy's key, TLS's
// proof of the client certificate's key, the Authorization header — and
// hands what it produced to the entry point as a Credential:
//
//	Token           a bearer token (JWT)        → Verifier (tokens)
//	KerberosTicket  an AP-REQ for a service     → krb5auth
//	Negotiate       an SPNEGO header value      → krb5auth
//	Chain           a key-proven X.509 chain    → X509 (x509grid + mappings)
//	nil             no credential               → nil identity (anonymous)
//
// The result says how it was proven: Identity.Method is
// MethodToken, MethodKrb5 or MethodX509, stamped by the entry
// point, not by the verifier, on a copy of the verifier's identity. Code
// that treats credentials differently (the policy's grants for
// site-mapped users, refusal wording, the jobs' local class, operator
// checks) asks Identity.Is(method), never the form of the issuer; the
// issuer keeps its "krb5:REALM" and "x509:CA" forms only so that an
// (issuer, subject) pair — job ownership, fair share, [[auth.operator]]
// — names one person whatever the method. An X.509 identity's subject is
// the DN, its FQANs the VOMS attributes accepted, and Ignored what of
// the credential was not taken (an attribute certificate of an unlisted
// VOMS server), for refusals to explain.
//
// A refusal is the verifier's error unchanged (a *Denied for tokens, a
// krb5auth.ErrRefused, an x509grid reason), or a *Denied saying the box
// takes no credential of that kind; the caller keeps it as the request's
// AuthError, so a refused credential never quietly becomes anonymous.
// Takes and KerberosPrincipal tell the frontends what to offer (root://'s
// security protocols, https' WWW-Authenticate challenges). LogAttrs
// names an identity in log lines alike everywhere ("auth" is the method,
// as in the access log, where "method" would be HTTP's).
//
// Adding a credential kind is a Credential type and a verifier field
// here, a case in Authenticate, a Method constant, and the handshake in
// the frontends that speak it: nothing else changes (store.Identity
// carries the method as a string; the logs, the access log and the jobs
// show it as it is).
package auth
