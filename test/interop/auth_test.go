package interop

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"sitebox/internal/tlsutil"
	"sitebox/test/peers"
)

// authPolicy is the namespace policy of the origin in TestAuth.
const authPolicy = `
[[auth.namespace]]
prefix = "/store/cms"
read = "vo"
vos = ["cms"]
[[auth.namespace]]
prefix = "/store/tok"
read = "token"
[[auth.namespace]]
prefix = "/store/pub"
read = "public"
write = "none"
[[auth.namespace]]
prefix = "/store/secret"
read = "token"
protection = "privacy"
[[auth.namespace]]
prefix = "/store/integ"
read = "public"
protection = "integrity"
`

// TestAuth: a box that is its own token issuer, a namespace policy, and
// the clients of the field — xrdcp with BEARER_TOKEN over roots://, curl
// with a bearer header, uproot over https:// with a token header.
func TestAuth(t *testing.T) {
	for _, tool := range []string{"xrdcp", "curl", "openssl"} {
		peers.Require(t, tool)
	}
	py := python(t)
	pool := t.TempDir()
	files := map[string][]byte{}
	for _, f := range []string{"cms/f", "tok/a/x", "tok/ab/x", "pub/p", "secret/s", "integ/i"} {
		files[f] = writeRandom(t, filepath.Join(pool, f), 200_000)
	}
	tree := filepath.Join(pool, "cms/tree.root")
	makeTree(t, py, tree, 3, 20_000, 4)
	// A foreign issuer trusted for its own base path, not for any VO:
	// its "/cms" group must not open the cms namespace.
	foreign := newForeignIssuer(t, "https://foreign.example.org")
	foreignConf := "[[auth.issuer]]\nurl = \"" + foreign.url + "\"\njwks = \"" + foreign.jwks + "\"\nbase_path = \"/store/foreign\"\n"
	o := startIssuerNodeVOs(t, "origin", "A", []string{"cms", "atlas"}, "[[export]]\nprefix = \"/store\"\npools = [\""+pool+"\"]\n"+foreignConf+authPolicy)
	ca := certDir(t, o.fedNode)
	dir := t.TempDir()
	alice := o.token(t, "alice", "/cms", "storage.read:/store,storage.create:/store/cms")
	bob := o.token(t, "bob", "/atlas", "storage.read:/store")
	roots := "roots://" + o.rootHost + "/"

	// xrdcpAs copies src to dst with token; it reports the output and
	// whether the copy worked.
	xrdcpAs := func(token, src, dst string, env ...string) (string, bool) {
		out, err := runEnv(t, append(xrdEnv(ca, token), env...), "xrdcp", "-f", src, dst)
		return out, err == nil
	}
	// curlAs fetches (or, with a body file, PUTs) url with token and
	// returns the status line's code and the body.
	curlAs := func(token, method, url, upload string) (string, string) {
		out := filepath.Join(t.TempDir(), "body")
		args := []string{"-sS", "--cacert", o.certFile, "-o", out, "-w", "%{http_code}", "-X", method}
		if token != "" {
			args = append(args, "-H", "Authorization: Bearer "+token)
		}
		if upload != "" {
			args = append(args, "-T", upload)
		}
		code, _ := run(t, true, "curl", append(args, url)...)
		body, _ := os.ReadFile(out)
		return code, string(body)
	}

	t.Run("xrdcp roots:// with BEARER_TOKEN", func(t *testing.T) {
		if out, ok := xrdcpAs(alice, roots+"/store/cms/f", dir+"/cms"); !ok {
			t.Fatalf("alice reads /store/cms: %s", out)
		}
		sameFile(t, dir+"/cms", files["cms/f"])
		up := filepath.Join(dir, "upload")
		os.WriteFile(up, []byte("from alice\n"), 0o644)
		if out, ok := xrdcpAs(alice, up, roots+"/store/cms/new.txt"); !ok {
			t.Fatalf("alice writes /store/cms: %s", out)
		}
		if b, _ := os.ReadFile(filepath.Join(pool, "cms/new.txt")); string(b) != "from alice\n" {
			t.Errorf("uploaded file holds %q", b)
		}
		for _, c := range []struct{ name, token, src, dst, why string }{
			{"no token", "", roots + "/store/cms/f", dir + "/x", "no token"},
			{"other VO", bob, roots + "/store/cms/f", dir + "/x", "VO atlas may not read"},
			{"read scope used to write", bob, up, roots + "/store/tok/new.txt", "no storage.create scope"},
			{"write to a read-only namespace", alice, up, roots + "/store/pub/new.txt", "pub"},
		} {
			out, ok := xrdcpAs(c.token, c.src, c.dst)
			if ok || !strings.Contains(out, c.why) {
				t.Errorf("%s: worked %v, want a refusal naming %q: %s", c.name, ok, c.why, out)
			}
		}
		for _, f := range []string{"tok/new.txt", "pub/new.txt"} {
			if _, err := os.Stat(filepath.Join(pool, f)); err == nil {
				t.Errorf("refused upload left %s behind", f)
			}
		}
	})

	t.Run("groups count only from the issuer trusted for the VO", func(t *testing.T) {
		const noVO = "token has no VO groups"
		for _, c := range []struct{ name, token, why string }{
			{"foreign /cms, no scope", foreign.token(t, "mallory", "/cms", ""), noVO},
			{"foreign /cms, scope of its whole base", foreign.token(t, "mallory", "/cms", "storage.read:/"), noVO},
			{"foreign /cms, scope climbing out of its base", foreign.token(t, "mallory", "/cms", "storage.read:/../cms"), "not a clean absolute path"},
		} {
			t.Run(c.name, func(t *testing.T) {
				if code, body := curlAs(c.token, "GET", o.httpsURL+"/store/cms/f", ""); code != "403" && code != "401" || !strings.Contains(body, c.why) {
					t.Errorf("https: %s %q, want a refusal naming %q", code, body, c.why)
				}
				if out, ok := xrdcpAs("", o.rootURL+"//store/cms/f?authz=Bearer%20"+c.token, dir+"/foreign"); ok || !strings.Contains(out, c.why) {
					t.Errorf("root:// with authz=: worked %v, want a refusal naming %q: %s", ok, c.why, out)
				}
				if out, ok := xrdcpAs(c.token, roots+"/store/cms/f", dir+"/foreign"); ok || !strings.Contains(out, c.why) {
					t.Errorf("roots:// with BEARER_TOKEN: worked %v, want a refusal naming %q: %s", ok, c.why, out)
				}
				if fi, err := os.Stat(dir + "/foreign"); err == nil && fi.Size() > 0 {
					t.Errorf("a refused copy left %d bytes", fi.Size())
				}
			})
		}
		// The log names the reason and who asked: issuer and subject.
		log := o.proc.Log.String()
		if !strings.Contains(log, noVO) || !strings.Contains(log, "issuer="+foreign.url) || !strings.Contains(log, "subject=mallory") {
			t.Errorf("the server log does not name the refusal with its issuer and subject")
		}
		// The cms token of the issuer trusted for cms is served everywhere.
		if code, body := curlAs(alice, "GET", o.httpsURL+"/store/cms/f", ""); code != "200" || body != string(files["cms/f"]) {
			t.Errorf("alice over https: %s", code)
		}
		if out, ok := xrdcpAs("", o.rootURL+"//store/cms/f?authz=Bearer%20"+alice, dir+"/alice-root"); !ok {
			t.Errorf("alice over root:// with authz=: %s", out)
		}
		if out, ok := xrdcpAs(alice, roots+"/store/cms/f", dir+"/alice-roots"); !ok {
			t.Errorf("alice over roots://: %s", out)
		}
	})

	t.Run("curl with a bearer token", func(t *testing.T) {
		if code, body := curlAs(alice, "GET", o.httpsURL+"/store/cms/f", ""); code != "200" || body != string(files["cms/f"]) {
			t.Errorf("alice GET: %s (%d bytes)", code, len(body))
		}
		if code, body := curlAs("", "GET", o.httpsURL+"/store/cms/f", ""); code != "401" || !strings.Contains(body, "no token") {
			t.Errorf("anonymous GET: %s %q", code, body)
		}
		if code, body := curlAs(bob, "GET", o.httpsURL+"/store/cms/f", ""); code != "403" || !strings.Contains(body, "VO atlas") {
			t.Errorf("atlas GET of cms data: %s %q", code, body)
		}
		if code, body := curlAs("", "GET", o.httpsURL+"/store/pub/p", ""); code != "200" || body != string(files["pub/p"]) {
			t.Errorf("public GET: %s", code)
		}
		up := filepath.Join(dir, "curl-up")
		os.WriteFile(up, []byte("via curl\n"), 0o644)
		if code, body := curlAs(bob, "PUT", o.httpsURL+"/store/tok/curl.txt", up); code != "403" || !strings.Contains(body, "storage.create") {
			t.Errorf("PUT with a read-only token: %s %q", code, body)
		}
		if _, err := os.Stat(filepath.Join(pool, "tok/curl.txt")); err == nil {
			t.Error("refused PUT wrote a file")
		}
		if code, _ := curlAs(alice, "PUT", o.httpsURL+"/store/cms/curl.txt", up); code != "201" && code != "204" {
			t.Errorf("PUT with a create scope: %s", code)
		}
	})

	t.Run("uproot over https:// with a token header", func(t *testing.T) {
		script := `
import os, sys, numpy as np, uproot
local, url, cert, tok = sys.argv[1:5]
os.environ["SSL_CERT_FILE"] = cert
want = uproot.open(local)["Events"].arrays(library="np")
with uproot.open(url + ":Events", headers={"Authorization": "Bearer " + tok}) as tree:
    got = tree.arrays(library="np")
for k in want:
    assert np.array_equal(got[k], want[k]), k
try:
    uproot.open(url + ":Events", headers={"Authorization": "Bearer " + sys.argv[5]})
    print("atlas token read cms data")
    sys.exit(1)
except Exception as e:
    print("refused:", type(e).__name__)
print("same", len(want))
`
		out, _ := run(t, false, py, "-c", script, tree, o.httpsURL+"/store/cms/tree.root", o.certFile, alice, bob)
		if !strings.Contains(out, "same 3") || !strings.Contains(out, "refused") {
			t.Errorf("uproot: %s", out)
		}
	})

	t.Run("integrity and privacy", func(t *testing.T) {
		// xrdcp's default pgread carries CRC32C: allowed on plain root://.
		if out, ok := xrdcpAs("", o.rootURL+"//store/integ/i", dir+"/i"); !ok {
			t.Errorf("pgread of an integrity namespace: %s", out)
		}
		out, ok := xrdcpAs("", o.rootURL+"//store/integ/i", dir+"/i2", "XRD_CPUSEPGWRTRD=0")
		if ok || !strings.Contains(out, "integrity") {
			// Under load xrdcp 5.5 may report the refused read as
			// "Received corrupted data": the refusal of its first chunk
			// fails the file before it queues the next one, so the copy
			// ends short and it blames the size. No byte was served.
			t.Logf("plain kXR_read of an integrity namespace: worked %v: %s", ok, out)
			if ok || !strings.Contains(out, "corrupted") {
				t.Errorf("plain kXR_read of an integrity namespace: worked %v: %s", ok, out)
			}
		}
		if fi, err := os.Stat(dir + "/i2"); err == nil && fi.Size() > 0 {
			t.Errorf("a refused plain read left %d bytes", fi.Size())
		}
		if out, ok := xrdcpAs("", roots+"/store/integ/i", dir+"/i3", "XRD_CPUSEPGWRTRD=0"); !ok {
			t.Errorf("plain read over roots:// (TLS gives integrity): %s", out)
		}
		// A privacy namespace over plain root://, even with a valid token.
		out, ok = xrdcpAs("", o.rootURL+"//store/secret/s?authz=Bearer%20"+alice, dir+"/s")
		if ok || !strings.Contains(out, "requires TLS") {
			t.Errorf("privacy namespace over plain root://: worked %v: %s", ok, out)
		}
		if out, ok := xrdcpAs(alice, roots+"/store/secret/s", dir+"/s2"); !ok {
			t.Errorf("privacy namespace over roots:// with a token: %s", out)
		}
	})

	t.Run("bad tokens", func(t *testing.T) {
		target := "/store/tok/ab/x"
		now := time.Now()
		cases := []struct {
			name, token, why string
			path             string
		}{
			{"expired", o.forge(t, o.claims("eve", "", "storage.read:/store", func(c jwt.MapClaims) {
				c["exp"], c["iat"], c["nbf"] = now.Add(-time.Hour).Unix(), now.Add(-2*time.Hour).Unix(), now.Add(-2*time.Hour).Unix()
			}), nil), "expired", target},
			{"not yet valid", o.forge(t, o.claims("eve", "", "storage.read:/store", func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() }), nil), "not valid before", target},
			{"wrong issuer", o.forge(t, o.claims("eve", "", "storage.read:/store", func(c jwt.MapClaims) { c["iss"] = "https://evil.example.org" }), nil), "not trusted", target},
			{"bad signature", o.forge(t, o.claims("eve", "", "storage.read:/store", nil), otherKey(t)), "signature", target},
			{"alg none", algNone(o.claims("eve", "", "storage.read:/store", nil)), "none", target},
			{"scope for /store/tok/a used on /store/tok/ab", o.token(t, "eve", "", "storage.read:/store/tok/a"), "/store/tok/ab", target},
			{"../ escaping a scope", o.forge(t, o.claims("eve", "", "storage.read:/store/tok/a/../ab", nil), nil), "..", target},
			{"exp as a string", o.forge(t, o.claims("eve", "", "storage.read:/store", func(c jwt.MapClaims) {
				c["exp"] = strconv.FormatInt(now.Add(time.Hour).Unix(), 10)
			}), nil), "is not a NumericDate", target},
			{"valid for ten years", o.forge(t, o.claims("eve", "", "storage.read:/store", func(c jwt.MapClaims) {
				c["exp"] = now.Add(10 * 365 * 24 * time.Hour).Unix()
			}), nil), "max_token_lifetime", target},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				code, body := curlAs(c.token, "GET", o.httpsURL+c.path, "")
				if code != "401" && code != "403" || !strings.Contains(body, c.why) {
					t.Errorf("curl: %s %q, want a denial naming %q", code, body, c.why)
				}
				out, ok := xrdcpAs("", o.rootURL+"/"+c.path+"?authz=Bearer%20"+c.token, dir+"/bad")
				if ok || !strings.Contains(out, c.why) {
					t.Errorf("xrdcp with authz=: worked %v: %s", ok, out)
				}
				// Over roots:// the token goes in kXR_auth (ztn); XrdCl
				// falls back to anonymous when it is refused, and the
				// reason must still reach its user.
				out, ok = xrdcpAs(c.token, roots+c.path, dir+"/bad")
				if ok || !strings.Contains(out, c.why) {
					t.Errorf("xrdcp roots:// with BEARER_TOKEN: worked %v, want the reason %q: %s", ok, c.why, out)
				}
				if !strings.Contains(o.proc.Log.String(), c.why) {
					t.Errorf("the refusal (%q) is not in the server log", c.why)
				}
			})
		}
		t.Run("1 MB token", func(t *testing.T) {
			// Too big for a command line or an environment variable: files.
			huge := filepath.Join(t.TempDir(), "huge")
			os.WriteFile(huge, []byte(strings.Repeat("A", 1<<20)), 0o600)
			// curl cannot hold a 1 MB header: Go's client sends it.
			tc, err := tlsutil.ClientConfig(o.certFile, false)
			if err != nil {
				t.Fatal(err)
			}
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 30 * time.Second}
			for _, u := range []string{o.httpsURL + target, o.httpsURL + target + "?authz=" + strings.Repeat("A", 1<<20)} {
				req, _ := http.NewRequest("GET", u, nil)
				if !strings.Contains(u, "authz") {
					req.Header.Set("Authorization", "Bearer "+strings.Repeat("A", 1<<20))
				}
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 431 && resp.StatusCode != 414 && !(resp.StatusCode == 401 && strings.Contains(string(body), "limit")) {
					t.Errorf("1 MB token (%d-byte URL): %d %q", len(u), resp.StatusCode, body)
				}
				t.Logf("https with a 1 MB token: %s", resp.Status)
			}
			env := append(xrdEnv(ca, ""), "BEARER_TOKEN_FILE="+huge)
			out, err := runEnv(t, env, "xrdcp", "-f", roots+target, dir+"/huge")
			if err == nil || !strings.Contains(out, "no token") {
				t.Errorf("xrdcp with a 1 MB token: %v: %s", err, out)
			}
			t.Logf("xrdcp with a 1 MB token file (XrdCl refuses to send it): %s", strings.TrimSpace(out))
			out, err = runEnv(t, nil, "xrdcp", "-f", o.rootURL+"/"+target+"?authz="+strings.Repeat("A", 100_000), dir+"/huge")
			if err == nil {
				t.Errorf("xrdcp with a 100 kB authz= read the file: %s", out)
			}
			t.Logf("xrdcp with a 100 kB authz=: %s", strings.TrimSpace(out))
		})
	})
}
