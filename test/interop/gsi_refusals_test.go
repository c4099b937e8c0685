package interop

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sitebox/internal/x509grid/x509test"
	"sitebox/internal/xrootd/proto"
)

// Every refusal is the box's with its reason, in the reply and the log,
// and xrootd's decision is the same but where docs/root-protocol.md says
// otherwise: on the VO-only path (xrootd's authorization database: 3010)
// a plain proxy, another VO's, and VOMS proxies whose attribute
// certificate is not accepted (expired, signed with another key than its
// VOMS server's, from a VOMS server the vomsdir does not list: the box
// names why, xrootd authenticates without the VO); at authentication, a
// proxy from an unknown CA, a revoked user (xrootd reads), a proxy signed
// by another key than its issuer's, a chain longer than a proxy's path
// length allows (xrootd reads), an expired proxy or user certificate
// (which the XRootD client will not even send: the exchange is driven by
// hand).
func TestGSIRefusals(t *testing.T) {
	g := newGSIGrid(t)
	cases := []struct {
		name, proxy string
		want        string // in the box's reply and log
		authz       bool   // refused by the namespace policy, not at authentication
		// ac: the proxy's attribute certificate was not accepted; the
		// box's refusal says so, then why (want).
		ac     bool
		byHand bool
		// xrootd is where xrootd 5.5.3 decides otherwise, and why the box
		// does not follow it.
		xrootd string
	}{
		{name: "plain proxy on the VO path", proxy: "plain", authz: true,
			want: "certificate of " + x509test.AliceDN + " has no VOMS attributes of testvo, which alone may read /store/vo/f.txt"},
		{name: "another VO's proxy", proxy: "othervo", authz: true, want: "VO othervo may not read /store/vo/f.txt"},
		{name: "unknown CA", proxy: "unknown CA", want: "unknown CA: cannot verify client credentials"},
		{name: "revoked user", proxy: "revoked", want: "revoked at",
			xrootd: "xrootd 5.5.3 loads the CA's CRL, lists the user's serial as revoked, and authenticates the proxy all the same"},
		{name: "proxy signed by another key than its issuer's", proxy: "forged", want: "bad signature"},
		{name: "expired proxy", proxy: "expired", want: "expired at", byHand: true},
		{name: "expired user certificate", proxy: "expired user", want: "certificate 1 (" + x509test.OldDN + "): expired at", byHand: true},
		{name: "expired AC", proxy: "expired AC", authz: true, ac: true, want: "expired at"},
		{name: "AC with a broken signature", proxy: "broken AC", authz: true, ac: true, want: "does not verify with the key of " + x509test.VOMSDN},
		{name: "AC of a VOMS server the vomsdir does not list", proxy: "unlisted AC", authz: true, ac: true,
			want: "VOMS server not trusted for this VO: the vomsdir lists no VOMS server " + x509test.VOMS2DN},
		{name: "path length exceeded", proxy: "path length", want: "path length exceeded",
			xrootd: "xrootd 5.5.3 does not count proxies against the proxyCertInfo path length: it authenticates the chain and reads with the attributes of the proxy above"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proxy := g.proxies[c.proxy]
			if c.byHand {
				box := dialGSI(t, g.box.rootHost).exchange(t, g.PKI, proxy)
				if box.status != proto.StatusError || box.code != proto.ErrAuthFailed || !strings.Contains(box.msg, c.want) {
					t.Errorf("box: %+v, want kXR_AuthFailed naming %q", box, c.want)
				}
				xrd := dialGSI(t, "127.0.0.1:"+strconv.Itoa(g.xrdPort)).exchange(t, g.PKI, proxy)
				if xrd.status != proto.StatusError {
					t.Errorf("xrootd took it: %+v", xrd)
				}
				t.Logf("xrootd: %d %q", xrd.code, xrd.msg)
			} else {
				dst := filepath.Join(t.TempDir(), "f")
				// unix after gsi: a client refused at authentication
				// learns why from the request that follows.
				out, err := runEnv(t, gsiEnv(g.PKI, proxy, "gsi,unix"), "xrdcp", "-f", gsiURL("root", g.boxPort, "/store/vo/f.txt"), dst)
				if c.ac && !strings.Contains(out, "has no VOMS attributes of testvo, which alone may read /store/vo/f.txt: VOMS attributes not accepted: ") {
					t.Errorf("box: the refusal does not say the VOMS attributes were not accepted:\n%s", out)
				}
				if err == nil || !strings.Contains(out, "[3010]") || !strings.Contains(out, c.want) {
					t.Errorf("box: %v, want 3010 naming %q:\n%s", err, c.want, out)
				}
				out, err = runEnv(t, gsiEnv(g.PKI, proxy, "gsi"), "xrdcp", "-f", gsiURL("root", g.xrdPort, "/store/vo/f.txt"), dst)
				xrdWant := "Auth failed"
				if c.authz {
					xrdWant = "[3010]"
				}
				switch {
				case c.xrootd != "" && err == nil:
					t.Logf("xrootd reads: %s", c.xrootd)
				case err == nil || !strings.Contains(out, xrdWant):
					t.Errorf("xrootd: %v, want %q:\n%s", err, xrdWant, out)
				}
			}
			if !strings.Contains(g.box.proc.Log.String(), c.want) {
				t.Errorf("the box log lacks %q", c.want)
			}
		})
	}
}
