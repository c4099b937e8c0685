// Package fleet is what boxes and directors share to run a federation
// as one fleet: the advertiser that announces a box to its directors
// (signed by a Signer), the throughput probes boxes make to each other,
// the site-to-site matrix directors build from them, and planned
// downtime. It knows the wire formats, not the roles: the advertisement
// itself (director.Ad) and the registry stay with the director, which
// imports this package.
package fleet

// APIPrefix is where every sitebox HTTP API lives: the director's
// advertise, federation and matrix endpoints and the boxes' probe
// endpoint.
const APIPrefix = "/.sitebox/"

// HeaderDirectorRoot, in a director's answer to an advertisement, is the
// director's root:// address (host:port): where a box sends its root://
// clients while it drains on a graceful stop, when [root] drain_redirect
// names no other place.
const HeaderDirectorRoot = "Sitebox-Director-Root"
