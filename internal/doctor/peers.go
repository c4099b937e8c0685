package doctor

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"sitebox/internal/config"
)

// Clock skew limits: tokens carry exp and nbf to the second, and
// verifiers allow about a minute ([auth] clock_skew); past a few seconds
// the clock is drifting and will get there.
const (
	skewWarn  = 5 * time.Second
	skewError = 60 * time.Second
)

// peer is a server this box depends on.
type peer struct {
	kind, url, probe string // probe is the URL fetched
	ca, caKey        string
	insecure         bool
}

// checkPeers fetches each director this box advertises to and each token
// issuer it trusts, and compares their clocks with this one's.
func checkPeers(ctx context.Context, cfg *config.Config, o *Options) []Check {
	var peers []peer
	for _, u := range cfg.Advertise.To {
		peers = append(peers, peer{kind: "director", url: u, probe: u, ca: cfg.Advertise.CA, caKey: "[advertise] ca", insecure: cfg.Advertise.Insecure})
	}
	var out []Check
	for _, is := range cfg.Auth.Issuers {
		p := peer{kind: "token issuer", url: is.URL, ca: cfg.Auth.CA, caKey: "[auth] ca"}
		switch {
		case is.JWKS != "":
			out = append(out, Check{Name: "token issuer " + is.URL, Status: StatusSkip, Summary: "keys come from the file " + is.JWKS + "; the issuer is not contacted"})
			continue
		case is.JWKSURL != "":
			p.probe = is.JWKSURL
		default:
			p.probe = strings.TrimSuffix(is.URL, "/") + "/.well-known/openid-configuration"
		}
		peers = append(peers, p)
	}
	if len(peers) == 0 && len(out) == 0 {
		return []Check{{Name: "peers", Status: StatusSkip, Summary: "no [advertise] to and no [[auth.issuer]]"}}
	}
	for _, p := range peers {
		out = append(out, checkPeer(ctx, p, o))
	}
	return out
}

func checkPeer(ctx context.Context, p peer, o *Options) Check {
	c := Check{Name: p.kind + " " + p.url}
	client, err := o.HTTPClient(p.ca, p.insecure, o.Timeout)
	if err != nil {
		c.Status, c.Summary = StatusError, fmt.Sprintf("cannot use %s %s: %v", p.caKey, p.ca, err)
		c.Fix = "Point " + p.caKey + " at a readable PEM file of the CA certificate."
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.probe, nil)
	if err != nil {
		c.Status, c.Summary = StatusError, fmt.Sprintf("%q is not a URL: %v", p.probe, err)
		return c
	}
	start := o.Now()
	resp, err := client.Do(req)
	end := o.Now()
	if err != nil {
		return peerFailed(c, p, err, o)
	}
	resp.Body.Close()
	c.Status = StatusOK
	c.Summary = fmt.Sprintf("reachable (HTTP %d in %s)", resp.StatusCode, end.Sub(start).Round(time.Millisecond))
	if p.kind == "token issuer" && resp.StatusCode != http.StatusOK {
		c.Status = StatusWarn
		c.Summary = fmt.Sprintf("answers HTTP %d for %s", resp.StatusCode, p.probe)
		c.Explain = "The box finds an issuer's signing keys through this document; without it, tokens from this issuer are refused."
		c.Fix = "Check the issuer URL (it must equal the tokens' \"iss\"), or give its keys with jwks_url or a local jwks file."
	}
	date, derr := http.ParseTime(resp.Header.Get("Date"))
	if derr != nil {
		c.Summary += "; it sends no Date header, so its clock cannot be compared"
		return c
	}
	// The peer stamped Date somewhere between start and end; the middle
	// is the best guess. Date drops the fraction of its second, so the
	// middle of that second stands for it.
	skew := date.Add(time.Second / 2).Sub(start.Add(end.Sub(start) / 2)).Round(time.Second)
	return clockSkew(c, p, skew)
}

// clockSkew grades the difference between the peer's clock and ours.
func clockSkew(c Check, p peer, skew time.Duration) Check {
	abs, dir := skew, "behind"
	if skew < 0 {
		abs, dir = -skew, "ahead of"
	}
	if abs <= skewWarn {
		c.Summary += fmt.Sprintf("; clocks agree (within %s)", skewWarn)
		return c
	}
	c.Status = StatusWarn
	if abs > skewError {
		c.Status = StatusError
	}
	c.Summary += fmt.Sprintf("; this box's clock is %s %s %s's", abs, dir, p.kind)
	c.Explain = "Tokens say when they start (nbf) and expire (exp) to the second, and boxes allow about a minute of difference ([auth] clock_skew): past that, fresh tokens look not yet valid or already expired, and advertisements and certificates look out of date."
	c.Fix = "Keep the clock synchronised: `timedatectl set-ntp true` (systemd-timesyncd) or install chrony; `timedatectl` or `chronyc tracking` shows the state. If this box is right, tell the peer's operators."
	return c
}

// peerFailed explains why a peer could not be fetched.
func peerFailed(c Check, p peer, err error, o *Options) Check {
	kind, words := classify(err, o.Timeout)
	c.Status = StatusError
	c.Summary = "unreachable: " + words
	what := "This box cannot register with the director, so clients are never sent here."
	if p.kind == "token issuer" {
		what = "This box cannot fetch the issuer's signing keys, so it refuses that issuer's tokens (keys already fetched are kept while they last)."
	}
	switch kind {
	case failUnknownCA:
		c.Explain = what + " Its certificate is not from a CA in this machine's trust store (a private CA, or another box's self-signed certificate)."
		c.Fix = fmt.Sprintf("Set %s to a PEM file with that CA's certificate (for another sitebox: its <state_dir>/tls/cert.pem).", p.caKey)
	case failHostname:
		c.Explain = what + " The name in the URL is not one its certificate was issued for."
		c.Fix = "Use the name the certificate is for in the URL, or have the peer's certificate reissued with this name."
	case failCertTime:
		c.Explain = what + " Either its certificate really expired, or this box's clock is far off."
		c.Fix = "Check this box's clock (`timedatectl`); if it is right, tell the peer's operators their certificate expired."
	case failNotTLS:
		c.Explain = what + " The server speaks plain HTTP on that port."
		c.Fix = "Use http:// in the URL if that is intended, or the peer's https port."
	case failRefused, failTimeout, failUnreachable:
		c.Explain = what + " Refused means nothing listens there or a firewall rejects; no answer means a firewall drops the packets on the way."
		c.Fix = "Check the URL and port; from this box try `curl -v " + p.probe + "`, and ask the peer's operators whether it is up and open to this box."
	case failDNS:
		c.Explain = what
		c.Fix = "Check the spelling of the name and this box's DNS (/etc/resolv.conf)."
	default:
		c.Explain = what
		c.Fix = "Try `curl -v " + p.probe + "` from this box to see more."
	}
	return c
}
