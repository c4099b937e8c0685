// Package gsi is XRootD's gsi security protocol, as xrdcp, xrdfs, the
// XRootD Python bindings and ROOT speak it with an X.509 proxy: the
// server proves itself with its host certificate, the client with its
// proxy chain (VOMS attributes included), and both agree a session key.
// Its wire forms follow XRootD's XrdSecgsi, XrdSut and XrdCrypto; the
// code is sitebox's own, on Go's crypto.
//
// # The exchange
//
// The login answer offers "&P=gsi,v:10600,c:ssl,ca:<hash>.0|<old hash>.0",
// the hashes naming the host certificate's CA, which the client must
// have in its X509_CERT_DIR. Then two kXR_auth rounds, each credential a
// Buffer ("gsi", a step, typed buckets):
//
//	client 1000  crypto module "ssl", version, its CA's hashes, options,
//	             main{challenge}
//	server 2001  main{the client's challenge signed with the host key,
//	             a challenge}, the server's DH value signed with the host
//	             key, cipher list "aes-128-cbc", digest list, host
//	             certificate (PEM)               — kXR_authmore
//	client 1001  chosen cipher "aes-128-cbc#16" and digest, its DH value
//	             signed with the proxy key, the proxy's public key,
//	             main{the server's challenge signed with the proxy key,
//	             the chain PEM (proxy first, no CA), a challenge}
//	             encrypted with the session key
//	server       kXR_ok, or kXR_error kXR_AuthFailed naming why
//
// "Signed" is XRootD's "encrypted with the private key": PKCS #1 v1.5
// type-1 blocks over the data itself, k-11 bytes per block, recovered by
// the peer with the public key (rsaraw.go). The DH blob is the group's
// PEM "DH PARAMETERS" then the public value in hex between ---BPUB---
// and ---EPUB---; the group is RFC 3526's 3072-bit MODP group (dh.go).
// The session key is the first 16 bytes of the shared secret, padded to
// the size of the prime; encrypted buckets are a 16-byte IV and AES-128-
// CBC ciphertext with PKCS #7 padding (cbc.go).
//
// # What the server checks
//
// The client holds the key of its chain's end when the public key it
// sent is that certificate's, the DH value the session key comes from is
// signed with it, and this exchange's challenge comes back signed with it
// (so a step recorded from another session cannot be replayed: its
// challenge is that session's). Only then is the chain
// verified, by the caller's VerifyFunc (sitebox: x509grid, through
// auth.X509). Challenges are signed only in their one shape (8
// characters), never as arbitrary bytes: raw PKCS #1 signatures of
// client-chosen data would sign digests for anyone. Buffers are parsed
// strictly, with limits on sizes and counts. The server's DH key and
// its signature serve the exchanges of ten seconds (dhshare.go), so a
// certificate request costs one RSA signature, and the second step one
// DH exponentiation besides the public-key checks; the work waits for a
// slot of the server's budget (Config.Concurrency). Clients older than version 10400, whose
// DH values are unsigned, are refused. Delegation (step 2002) is never
// asked for.
package gsi
