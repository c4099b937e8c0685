package davclient

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"sitebox/internal/store"
)

// Kerberos on https:// (SPNEGO, RFC 4559): a server that answers 401
// with "WWW-Authenticate: Negotiate" is sent the request again with an
// AP-REQ for HTTP/<host>, and so is every later request to that host.
// The ticket is sealed for that host's principal, but it names the
// user: it goes where the bearer token would (tokenFor), never in clear
// to a host other than the one the client was made for.

// wantsNegotiate reports whether resp asks for Kerberos and this client
// may answer it: it has a credential, the host may be sent one, and it
// was not sent one in this request already (tried holds the hosts that
// were, for the request being sent).
func (f *FS) wantsNegotiate(req *http.Request, resp *http.Response, tried map[string]bool) bool {
	if f.kerberos == nil || resp.StatusCode != http.StatusUnauthorized || tried[hostPort(req.URL)] {
		return false
	}
	if !offersNegotiate(resp.Header.Values("WWW-Authenticate")) {
		return false
	}
	return hostPort(req.URL) == hostPort(f.base) || req.URL.Scheme == "https"
}

// offersNegotiate reports whether one of the challenges is Negotiate.
func offersNegotiate(challenges []string) bool {
	for _, v := range challenges {
		for _, c := range strings.Split(v, ",") {
			scheme, _, _ := strings.Cut(strings.TrimSpace(c), " ")
			if strings.EqualFold(scheme, "Negotiate") {
				return true
			}
		}
	}
	return false
}

// negotiateHeader is the Authorization header for a host that asked for
// Kerberos; ok is false for the others. Why no ticket could be made is
// an error only when the host challenged this very request: sent
// unasked (the host wanted one before), the request goes without, and a
// file the host serves to anyone is still read.
func (f *FS) negotiateHeader(u *url.URL, challenged bool) (string, bool, error) {
	if _, asked := f.negotiate.Load(hostPort(u)); !asked || f.kerberos == nil {
		return "", false, nil
	}
	k, err := f.kerberos()
	if err == nil {
		var h string
		if h, err = k.Negotiate("HTTP/" + strings.ToLower(u.Hostname())); err == nil {
			return h, true, nil
		}
	}
	if !challenged {
		return "", false, nil
	}
	return "", false, fmt.Errorf("%w: %s asks for Kerberos (Negotiate): %w", store.ErrPermission, hostPort(u), err)
}
