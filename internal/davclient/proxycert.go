package davclient

import (
	"crypto/tls"
	"net/http"
	"sync"

	"sitebox/internal/x509grid"
)

// proxyTransport presents an X.509 proxy as the TLS client certificate
// (Options.Proxy). Connections are pooled per credential: once the
// proxy changes on disk, requests go over new connections made with the
// new one, and the old pool's idle connections are closed, so a server
// never keeps seeing a replaced identity on a kept-alive connection.
type proxyTransport struct {
	base  *http.Transport
	proxy func() (*x509grid.Credential, error)

	mu  sync.Mutex
	cur *x509grid.Credential
	tr  *http.Transport
}

func (p *proxyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return p.transport().RoundTrip(req)
}

// transport is the pool for the credential in effect. Without a usable
// proxy (unreadable, expired) requests go without a certificate: the
// server decides, as for any client holding none.
func (p *proxyTransport) transport() *http.Transport {
	cred, _ := p.proxy()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tr != nil && cred == p.cur {
		return p.tr
	}
	if p.tr != nil {
		p.tr.CloseIdleConnections()
	}
	tr := p.base.Clone()
	tc := tr.TLSClientConfig.Clone()
	cert := &tls.Certificate{} // none: an empty Certificate message
	if cred != nil {
		cert = cred.TLSCertificate()
	}
	// Given as a function, the chain is sent whatever CAs the server
	// lists in its request (Go's default picks none if the user's CA
	// is not among them, where servers of the grid list others).
	tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	tr.TLSClientConfig = tc
	p.cur, p.tr = cred, tr
	return tr
}

func (p *proxyTransport) CloseIdleConnections() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tr != nil {
		p.tr.CloseIdleConnections()
	}
}
