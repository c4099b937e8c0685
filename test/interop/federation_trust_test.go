package interop

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/director"
	"sitebox/internal/tlsutil"
	"sitebox/test/peers"
)

// TestFederationTrust attacks a real regional director the way the
// review did: forged, unsigned, replayed, out-of-grant, static-replacing
// and huge advertisements. Each is refused with its reason, in the reply
// and in the director's log, and real clients (xrdcp, curl -L) through
// the director always get the genuine bytes, never the forger's. An
// approved box joins; a revoked one is dropped.
func TestFederationTrust(t *testing.T) {
	for _, tool := range []string{"xrdcp", "curl", "xrootd"} {
		peers.Require(t, tool)
	}
	legacyData := t.TempDir()
	legacyWant := writeRandom(t, filepath.Join(legacyData, "legacy/old.bin"), 150_000)
	legacyHost := startXrootdOrigin(t, legacyData)
	// A member listed in the director's config, for config-managed sites:
	// its key made before either starts.
	cfgBox := prepareNode(t, 0)
	cfgKey, err := director.LoadOrCreateKey(director.KeyFile(cfgBox.state))
	if err != nil {
		t.Fatal(err)
	}
	region := startFedNode(t, "region", "R", "[director]\nenabled = true\nlocate_timeout = \"2s\"\n"+
		"[[director.server]]\nname = \"legacy\"\nsite = \"L\"\nroot = \"root://"+legacyHost+"\"\nprefixes = [\"/legacy\"]\n"+
		"[[director.member]]\nname = \"cfgbox\"\nkey = "+strconv.Quote(director.FormatKey(cfgKey.Public().(ed25519.PublicKey)))+
		"\nroles = [\"origin\"]\nprefixes = [\"/cfg\"]\nroot = \"root://127.0.0.1:"+strconv.Itoa(cfgBox.rp)+"\"\nhttps = "+strconv.Quote(cfgBox.httpsURL())+"\n")
	regionConf := filepath.Join(region.state, "sitebox.toml")

	unapproved, _, _ := strings.Cut(advertiseTo(region, "300ms"), approveMark)
	// The genuine origin, approved by the operator (advertiseTo).
	pool := t.TempDir()
	want := writeRandom(t, filepath.Join(pool, "file.bin"), 400_000)
	origin := startFedNode(t, "originA", "A", "[[export]]\nprefix = \"/store\"\npools = ["+strconv.Quote(pool)+"]\n"+advertiseTo(region, "300ms"))

	// The forger: a real box holding other bytes under the same names. Its
	// operator got it approved for /scratch only; it advertises /store too.
	evilStore, evilScratch := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(evilStore, "file.bin"), bytes.Repeat([]byte("EVIL"), 100_000), 0o644)
	os.MkdirAll(filepath.Join(evilStore, "legacy"), 0o755)
	os.WriteFile(filepath.Join(evilStore, "legacy", "old.bin"), []byte("EVIL"), 0o644)
	evil := startFedNode(t, "evil", "A", "[[export]]\nprefix = \"/store\"\npools = ["+strconv.Quote(evilStore)+"]\n"+
		"[[export]]\nprefix = \"/scratch\"\npools = ["+strconv.Quote(evilScratch)+"]\n"+unapproved)
	evilConf := filepath.Join(evil.state, "sitebox.toml")
	approveJoin(t, []string{"federation", "join", region.httpsURL, "--config", evilConf}, regionConf, "--prefix", "/scratch")
	evilKey, err := director.LoadOrCreateKey(director.KeyFile(evil.state))
	if err != nil {
		t.Fatal(err)
	}
	cfgBox.start(t, "cfgbox", "A", "[[export]]\nprefix = \"/cfg\"\npools = ["+strconv.Quote(t.TempDir())+"]\n"+unapproved)
	waitFor(t, 10*time.Second, "originA and the config member in the registry", func() bool {
		return registryHas(t, region, "originA") && registryHas(t, region, "cfgbox")
	})
	waitFor(t, 10*time.Second, "the real forger box refused for /store", func() bool {
		return strings.Contains(evil.proc.Log.String(), `prefix \"/store\" is not granted`)
	})

	hc, err := tlsutil.HTTPClient(region.certFile, false, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	evilRoot := strings.TrimPrefix(evil.rootURL, "root://")
	forged := director.Ad{Name: "originA", Site: "A", Role: director.RoleOrigin, Root: evilRoot, HTTPS: evil.httpsURL, Prefixes: []string{"/store"}, Interval: 1e9}
	asEvil := forged
	asEvil.Name = "evil"
	staticGrab := forged
	staticGrab.Name, staticGrab.Prefixes = "legacy", []string{"/legacy"}
	huge := asEvil
	huge.Prefixes = []string{"/scratch"}
	for i := range 20_000 {
		huge.Servers = append(huge.Servers, director.Ad{Name: fmt.Sprint("child", i), Role: director.RoleOrigin, Root: evilRoot, Prefixes: []string{"/scratch"}})
	}
	_, stranger, _ := ed25519.GenerateKey(rand.Reader)
	genuineKey, err := director.LoadOrCreateKey(director.KeyFile(origin.state))
	if err != nil {
		t.Fatal(err)
	}
	originRoot := strings.TrimPrefix(origin.rootURL, "root://")
	genuine := director.Ad{Name: "originA", Site: "A", Role: director.RoleOrigin, Root: originRoot, HTTPS: origin.httpsURL, Prefixes: []string{"/store"}, Interval: 0.3}
	genuineBody, _ := json.Marshal(genuine)
	// The box's own advertiser signs with the same key: if one of its ads
	// signed later lands first, this one is (rightly) a replay; sign again.
	var captured http.Header
	waitFor(t, 5*time.Second, "a genuine ad to capture accepted", func() bool {
		captured = http.Header{}
		(&director.Signer{Member: "originA", Key: genuineKey}).Sign(captured, genuineBody)
		code, _ := postAdvert(t, hc, region, captured, genuineBody)
		return code == 204
	})

	cases := []struct {
		name   string
		signer *director.Signer // nil: unsigned
		ad     director.Ad
		replay bool
		code   int
		reason string
	}{
		{"no credentials", nil, forged, false, 401, "not signed"},
		{"wrong key", &director.Signer{Member: "originA", Key: stranger}, forged, false, 401, "does not verify"},
		{"prefix not granted", &director.Signer{Member: "evil", Key: evilKey}, asEvil, false, 403, "not granted"},
		{"another member's name", &director.Signer{Member: "evil", Key: evilKey}, forged, false, 403, "may advertise only as"},
		{"replayed", nil, genuine, true, 401, "replayed"},
		{"static entry, unsigned", nil, staticGrab, false, 401, "not signed"},
		{"static entry, signed", &director.Signer{Member: "evil", Key: evilKey}, staticGrab, false, 403, "may advertise only as"},
		{"20k children, unsigned", nil, huge, false, 401, "not signed"},
		{"20k children, signed", &director.Signer{Member: "evil", Key: evilKey}, huge, false, 413, "larger than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, _ := json.Marshal(c.ad)
			h := http.Header{}
			switch {
			case c.replay:
				h, body = captured, genuineBody
			case c.signer != nil:
				c.signer.Sign(h, body)
			}
			code, msg := postAdvert(t, hc, region, h, body)
			if code != c.code || !strings.Contains(msg, c.reason) {
				t.Errorf("got %d %q, want %d with %q", code, msg, c.code, c.reason)
			}
			waitFor(t, 5*time.Second, "the refusal in the director's log", func() bool {
				return strings.Contains(region.proc.Log.String(), "advertisement refused") && strings.Contains(region.proc.Log.String(), c.reason)
			})
		})
	}

	// No client is sent to the forger: xrdcp and curl -L get the genuine
	// files (the static legacy one too), and the registry points at
	// originA and the legacy server only.
	dir := t.TempDir()
	run(t, false, "xrdcp", "-f", region.rootURL+"//store/file.bin", dir+"/xrdcp")
	sameFile(t, dir+"/xrdcp", want)
	run(t, false, "xrdcp", "-f", region.rootURL+"//legacy/old.bin", dir+"/legacy")
	sameFile(t, dir+"/legacy", legacyWant)
	bundle := certBundle(t, region, origin, evil)
	run(t, false, "curl", "-sS", "-L", "--fail", "--cacert", bundle, "-o", dir+"/curl", region.httpsURL+"/store/file.bin")
	sameFile(t, dir+"/curl", want)
	for _, s := range fedServers(t, region) {
		if s.Root == evilRoot || s.HTTPS == evil.httpsURL {
			t.Errorf("the forger is in the registry: %+v", s)
		}
		if s.Name == "legacy" && (!s.Static || s.Root != legacyHost) {
			t.Errorf("static entry replaced: %+v", s)
		}
	}

	// Revoked: dropped at once, its ads refused from then on.
	run(t, false, siteboxBin, "federation", "revoke", "originA", "--config", regionConf)
	waitFor(t, 10*time.Second, "originA dropped", func() bool { return !registryHas(t, region, "originA") })
	waitFor(t, 10*time.Second, "originA's ads refused", func() bool {
		return strings.Contains(origin.proc.Log.String(), `\"originA\" is not a member`)
	})
	if out, err := run(t, true, "xrdcp", "-f", region.rootURL+"//store/file.bin", dir+"/after"); err == nil {
		t.Errorf("a revoked box still serves through the director: %s", out)
	}
}

func postAdvert(t *testing.T, hc *http.Client, dir *fedNode, h http.Header, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, dir.httpsURL+director.APIPrefix+"advertise", bytes.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, strings.TrimSpace(string(msg))
}

func fedServers(t *testing.T, dir *fedNode) []director.Server {
	t.Helper()
	out, _ := run(t, false, siteboxBin, "federation", dir.httpsURL, "--ca", dir.certFile, "--json")
	var f director.Federation
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("federation --json: %v: %s", err, out)
	}
	return f.Servers
}

func registryHas(t *testing.T, dir *fedNode, name string) bool {
	for _, s := range fedServers(t, dir) {
		if s.Name == name {
			return true
		}
	}
	return false
}
