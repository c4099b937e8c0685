package box

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sitebox/internal/config"
	"sitebox/internal/director"
)

// ApprovalPolicy is what `sitebox federation approve` checks a member
// against on the director cfg describes: the director's own names and
// endpoints, and its CA's name constraints. allowLoopback approves
// loopback names (a test federation on one machine).
func ApprovalPolicy(cfg *config.Config, allowLoopback bool) (director.ApprovalPolicy, error) {
	nc, err := cfg.Director.NameConstraints()
	if err != nil {
		return director.ApprovalPolicy{}, fmt.Errorf("[director] %w", err)
	}
	p := director.ApprovalPolicy{AllowLoopback: allowLoopback, CA: cfg.Director.CA, Constraints: nc}
	p.OwnNames, p.OwnEndpoints = directorNames(cfg)
	return p, nil
}

// directorNames are the host names the director goes by (those of the
// certificates it may serve, of its configured URLs and listeners, its
// hostname) and its endpoints (host:port of its URLs and listeners, the
// box's own too: a member claiming them would take the box's place).
func directorNames(cfg *config.Config) (names, endpoints []string) {
	addName := func(h string) {
		h = strings.ToLower(strings.Trim(h, "[]"))
		if h != "" && !slices.Contains(names, h) {
			names = append(names, h)
		}
	}
	addEndpoint := func(hostPort string) {
		host, port, err := net.SplitHostPort(hostPort)
		if err != nil || port == "0" {
			return
		}
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			host, _ = os.Hostname()
		}
		addName(host)
		ep := net.JoinHostPort(strings.ToLower(host), port)
		if !slices.Contains(endpoints, ep) {
			endpoints = append(endpoints, ep)
		}
	}
	if root, https, err := configEndpoints(cfg); err == nil {
		addEndpoint(root)
		addEndpoint(urlHostPort(https))
	}
	for _, raw := range []string{cfg.Director.RootURL, cfg.Director.HTTPSURL, cfg.Advertise.RootURL, cfg.Advertise.HTTPSURL} {
		addEndpoint(urlHostPort(raw))
	}
	for _, addr := range []string{cfg.Root.Addr, cfg.HTTPS.Addr, cfg.Director.RootAddr, cfg.Director.HTTPSAddr} {
		addEndpoint(addr)
	}
	if hn, err := os.Hostname(); err == nil {
		addName(hn)
	}
	state := cfg.Server.StateDir
	for _, f := range []string{cfg.HTTPS.Cert, fedCertFile(state), filepath.Join(state, "tls", "cert.pem")} {
		for _, n := range certNames(f) {
			addName(n)
		}
	}
	return names, endpoints
}

// certNames are the names of the first certificate in file (none if it
// cannot be read: a director that never started has none yet).
func certNames(file string) []string {
	data, err := os.ReadFile(file)
	if file == "" || err != nil {
		return nil
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil
	}
	names := slices.Clone(c.DNSNames)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	return names
}

// CheckAddressedHere says why a join request for the director at
// dirURL is not for the director cfg describes, nil if it is: the URL's
// host must be one of the director's names and its port the director's
// https port. A request made for another director has no business here,
// however well signed.
func CheckAddressedHere(cfg *config.Config, dirURL string) error {
	if dirURL == "" {
		return errors.New("the request names no director (its sitebox is too old: upgrade it and run join again)")
	}
	u, err := url.Parse(dirURL)
	if err != nil || u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("the request is addressed to %q, which is no director URL", dirURL)
	}
	names, _ := directorNames(cfg)
	ports := directorHTTPSPorts(cfg)
	host, port, _ := net.SplitHostPort(urlHostPort(dirURL))
	if slices.Contains(names, strings.ToLower(host)) && slices.Contains(ports, port) {
		return nil
	}
	_, https, _ := configEndpoints(cfg)
	return fmt.Errorf("the request is addressed to %s, not to this director (%s; its names %s, https ports %s): it was made for another director. If clients reach this one by that name, set [director] https_url (or [advertise] https_url) to it",
		dirURL, orNone(https), strings.Join(names, ", "), strings.Join(ports, ", "))
}

// directorHTTPSPorts are the ports the director's API answers on: its
// https listener's and its advertised URL's.
func directorHTTPSPorts(cfg *config.Config) []string {
	var ports []string
	add := func(hostPort string) {
		if _, p, err := net.SplitHostPort(hostPort); err == nil && p != "0" && !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	if _, https, err := configEndpoints(cfg); err == nil {
		add(urlHostPort(https))
	}
	if cfg.Director.OwnListeners() {
		add(cfg.Director.HTTPSAddr)
	} else {
		add(cfg.HTTPS.Addr)
	}
	return ports
}

func orNone(s string) string {
	if s == "" {
		return "no https endpoint"
	}
	return s
}

// urlHostPort is the host:port of a URL, with the scheme's default port
// when it names none ("" if raw is no URL with a host).
func urlHostPort(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80", "root": "1094", "roots": "1094"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}
