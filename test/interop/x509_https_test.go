package interop

import (
	"os"
	"strings"
	"testing"

	"sitebox/internal/x509grid/x509test"
	"sitebox/test/peers"
)

// X.509 proxies over https, side by side with XrdHttp 5.5 and its VOMS
// extractor (libXrdVoms, an authdb letting VO testvo read): curl, davix
// and gfal present each credential to both; a VOMS proxy of testvo reads
// the VO's namespace of both, and every other credential is refused by
// both, but for the documented difference (README's X.509 section,
// "Compared with XrdHttp 5.5"). The box answers each refusal with 403 and its reason
// (for an attribute certificate it did not take, why); XrdHttp refuses
// a chain it does not verify in the TLS handshake (unknown CA, expired
// proxy or user certificate, path length exceeded), and a chain without
// the VO, or whose attribute certificate it dropped, with 403.
func TestX509HTTPS(t *testing.T) {
	c := makeGridCreds(t)
	box := startX509Box(t, c)
	xrd := startXrdHTTPVOMS(t, c)
	for _, cr := range []struct {
		name, proxy string
		ok          bool
		// says is the reason the box gives (status 403), in the body
		// curl prints.
		says string
		// peerDiffers says why XrdHttp decides otherwise, which must
		// still hold.
		peerDiffers string
	}{
		{"VOMS proxy reads its VO", c.voms, true, "", ""},
		{"refused: plain proxy on a VO path", c.plain, false, "has no VOMS attributes of testvo", ""},
		{"refused: another VO's proxy", c.otherVO, false, "VO othervo may not read", ""},
		{"refused: proxy from an unknown CA", c.unknownCA, false, "client certificate refused: certificate 1 (/DC=org/DC=other/CN=Eve Other): issued by no CA of the CA directory", ""},
		{"refused: expired proxy", c.expired, false, "client certificate refused: certificate 0", ""},
		{"refused: revoked user", c.revoked, false, "revoked at", "XrdHttp 5.5 checks no CRL on client certificates, even with xrd.tlsca crlcheck all"},
		{"refused: AC from an unlisted VOMS server", c.unlisted, false, "VOMS server not trusted for this VO", ""},
		{"refused: expired user certificate", c.refused["expired user"], false, "client certificate refused: certificate 1 (" + x509test.OldDN + "): expired at", ""},
		{"refused: expired AC", c.refused["expired AC"], false, "has no VOMS attributes of testvo, which alone may read /store/vo/f: VOMS attributes not accepted: ", ""},
		{"refused: AC with a broken signature", c.refused["broken AC"], false, "does not verify with the key of " + x509test.VOMSDN, ""},
		{"refused: path length exceeded", c.refused["path length"], false, "path length exceeded", ""},
	} {
		t.Run(cr.name, func(t *testing.T) {
			for _, cl := range gridClients() {
				peers.Require(t, cl.tool)
				ok, out := cl.get(t, c, cr.proxy, box.httpsURL+"/store/vo/f", "")
				peerOK, peerOut := cl.get(t, c, cr.proxy, xrd.url+"/vo/f", "")
				t.Logf("%s: box %v, XrdHttp %v", cl.name, ok, peerOK)
				if cl.name == "curl" && !peerOK {
					t.Logf("curl: XrdHttp: %s", strings.TrimSpace(tail(peerOut, 300)))
				}
				if ok != cr.ok {
					t.Errorf("%s: the box answered ok=%v, want %v:\n%s", cl.name, ok, cr.ok, tail(out, 2000))
				}
				switch {
				case cr.peerDiffers != "" && peerOK == cr.ok:
					t.Errorf("%s: XrdHttp now agrees (ok=%v); the documented difference %q no longer holds", cl.name, peerOK, cr.peerDiffers)
				case cr.peerDiffers == "" && peerOK != cr.ok:
					t.Errorf("%s: XrdHttp answered ok=%v, want %v:\n%s", cl.name, peerOK, cr.ok, tail(peerOut, 2000))
				case cr.peerDiffers != "":
					t.Logf("%s: XrdHttp differs as documented: %s", cl.name, cr.peerDiffers)
				}
				if !cr.ok && cl.name == "curl" && (!strings.HasPrefix(out, "HTTP 403") || !strings.Contains(out, cr.says)) {
					t.Errorf("curl: the box's refusal is not 403 saying %q:\n%s", cr.says, out)
				}
			}
		})
	}
}

// A bearer token and a certificate together: the token's identity
// counts (a token without the VO is refused where the certificate alone
// reads), and the access log names who read: the certificate's DN under
// x509:<its CA>, with its FQANs, when it alone is sent.
func TestX509HTTPSBearerWins(t *testing.T) {
	c := makeGridCreds(t)
	box := startX509Box(t, c)
	tok := box.token(t, "tokenuser", "", "storage.read:/store/tok")
	ok, out := curlWithProxy(t, c, c.voms, box.httpsURL+"/store/vo/f", "")
	if !ok {
		t.Fatalf("the VOMS proxy alone: %s", out)
	}
	ok, out = curlWithProxy(t, c, c.voms, box.httpsURL+"/store/vo/f", tok)
	if ok || !strings.HasPrefix(out, "HTTP 403") || !strings.Contains(out, "token has no VO groups") {
		t.Errorf("VOMS proxy and a token without the VO: the token's identity must count:\n%s", out)
	}
	ok, out = curlWithProxy(t, c, c.plain, box.httpsURL+"/store/tok/f", tok)
	if !ok {
		t.Errorf("a plain proxy and a token with a read scope: the token's rights must count:\n%s", out)
	}
	ok, out = curlWithProxy(t, c, c.voms, box.httpsURL+"/store/tok/f", "")
	if ok || !strings.Contains(out, "storage.read scope for /store/tok/f") {
		t.Errorf("the VOMS proxy alone on a token path:\n%s", out)
	}
	logs, err := os.ReadFile(box.accessLog)
	if err != nil {
		t.Fatal(err)
	}
	var certLine, tokLine bool
	for _, l := range strings.Split(string(logs), "\n") {
		certLine = certLine || strings.Contains(l, x509test.AliceDN) && strings.Contains(l, "x509:"+x509test.RootDN) &&
			strings.Contains(l, `fqans="`+x509test.TestFQAN+`"`) && strings.Contains(l, "/store/vo/f")
		tokLine = tokLine || strings.Contains(l, "tokenuser") && strings.Contains(l, "/store/tok/f")
	}
	if !certLine || !tokLine {
		t.Errorf("access log lacks the certificate's DN, issuer and FQANs (%v) or the token's subject (%v):\n%s", certLine, tokLine, logs)
	}
}
