package box

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"sitebox/internal/config"
	"sitebox/internal/director"
)

// JoinRequest is the request `sitebox federation join` prints for a
// director's operator: this box's name, site, roles, prefixes and public
// endpoints, read from its config the way the running box advertises
// them, and its federation key (made on first use in the state dir).
// prefixes, when given, replace those from the config (a director must
// name them: its servers come and go).
func JoinRequest(cfg *config.Config, directorURL string, prefixes []string) (director.Request, string, error) {
	r := director.Request{Director: directorURL}
	r.Name, r.Site = cfg.Server.Name, cfg.Server.Site
	if cfg.Director.Enabled {
		r.Roles = append(r.Roles, director.RoleDirector)
	}
	if len(cfg.Exports) > 0 {
		r.Roles = append(r.Roles, director.RoleOrigin)
	}
	if cfg.Cache.Enabled() {
		r.Roles = append(r.Roles, director.RoleCache)
	}
	if len(r.Roles) == 0 {
		return r, "", errors.New("this box plays no role a director would list (no [[export]], [cache] or [director])")
	}
	r.Prefixes = prefixes
	if len(r.Prefixes) == 0 {
		for _, e := range cfg.Exports {
			r.Prefixes = appendNew(r.Prefixes, e.Prefix)
		}
		for _, rt := range cfg.Cache.Routes {
			r.Prefixes = appendNew(r.Prefixes, rt.Prefix)
		}
	}
	if len(r.Prefixes) == 0 {
		return r, "", errors.New("a director's prefixes are those of the servers below it: name the ones to ask for with --prefix")
	}
	var err error
	if r.Root, r.HTTPS, err = configEndpoints(cfg); err != nil {
		return r, "", err
	}
	// What no director would approve is said now, to the box's operator,
	// rather than by the director's after a round trip.
	if _, err := director.CheckJoinHosts(r.Member); err != nil {
		return r, "", fmt.Errorf("%w (a director sends clients to these endpoints: set [advertise] root_url and https_url to names clients elsewhere reach)", err)
	}
	key, err := director.LoadOrCreateKey(director.KeyFile(cfg.Server.StateDir))
	if err != nil {
		return r, "", err
	}
	// The TLS key a CA director certifies at approval (install-cert).
	tlsKey, err := loadOrCreateTLSKey(cfg.Server.StateDir)
	if err != nil {
		return r, "", err
	}
	if r.TLSKey, err = tlsKeyText(tlsKey); err != nil {
		return r, "", err
	}
	text, err := r.Encode(key)
	if err != nil {
		return r, "", err
	}
	r.Key = director.FormatKey(key.Public().(ed25519.PublicKey))
	return r, text, nil
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// configEndpoints are the endpoints the box will advertise, worked out
// from the config as publicEndpoints does from the listeners: [advertise]
// root_url and https_url, else the listen addresses with a wildcard host
// replaced by the hostname. A box whose director has listeners of its own
// advertises the director's ([director] root_url, https_url, root_addr,
// https_addr): its origin and cache are servers below it.
func configEndpoints(cfg *config.Config) (root, https string, err error) {
	e := endpointKeys{rootURL: cfg.Advertise.RootURL, httpsURL: cfg.Advertise.HTTPSURL, rootAddr: cfg.Root.Addr, httpsAddr: cfg.HTTPS.Addr,
		rootKey: "[root] addr", httpsKey: "[https] addr", urlSection: "[advertise]"}
	if d := cfg.Director; d.Enabled && d.OwnListeners() {
		e = endpointKeys{rootURL: d.RootURL, httpsURL: d.HTTPSURL, rootAddr: orOff(d.RootAddr), httpsAddr: orOff(d.HTTPSAddr),
			rootKey: "[director] root_addr", httpsKey: "[director] https_addr", urlSection: "[director]"}
	}
	hostPort := func(addr, key string) (string, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil || port == "0" || port == "" {
			return "", fmt.Errorf("cannot tell the public address from %s %q: set %s %s", key, addr, e.urlSection, advertiseKey(key))
		}
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			host, _ = os.Hostname()
		}
		return net.JoinHostPort(host, port), nil
	}
	switch {
	case e.rootURL != "":
		root = endpointOf(e.rootURL).Root
	case e.rootAddr != config.Off:
		if root, err = hostPort(e.rootAddr, e.rootKey); err != nil {
			return "", "", err
		}
	}
	switch {
	case e.httpsURL != "":
		https = strings.TrimSuffix(e.httpsURL, "/")
	case e.httpsAddr != config.Off:
		hp, err := hostPort(e.httpsAddr, e.httpsKey)
		if err != nil {
			return "", "", err
		}
		scheme := "https://"
		if cfg.HTTPS.PlainHTTP {
			scheme = "http://"
		}
		https = scheme + hp
	}
	if root == "" && https == "" {
		return "", "", errors.New("the box has no root:// or https:// endpoint to advertise")
	}
	return root, https, nil
}

// endpointKeys name where configEndpoints reads a box's endpoints.
type endpointKeys struct {
	rootURL, httpsURL, rootAddr, httpsAddr string
	rootKey, httpsKey, urlSection          string
}

func advertiseKey(listenKey string) string {
	if strings.HasPrefix(listenKey, "[root]") || strings.HasSuffix(listenKey, "root_addr") {
		return "root_url"
	}
	return "https_url"
}
