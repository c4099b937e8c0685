package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/x509grid/x509test"
	"sitebox/internal/xrootd/gsi"
	"sitebox/internal/xrootd/proto"
	"sitebox/test/peers"
)

// gsiGrid is the shared test grid with the gsi tests' proxies, and the
// two servers reading the same files: a box and xrootd 5.5 with gsi and
// libXrdVoms.
type gsiGrid struct {
	*x509test.PKI
	box      *gsiBox
	boxPort  int
	xrd      *gsiXrootd
	xrdPort  int
	proxies  map[string]string // kind → proxy file (gsiProxies)
	otherKey string            // a proxy file whose key no chain of alice's holds
}

// newGSIGrid makes the proxies and starts both servers, testvo reading
// /store/vo.
func newGSIGrid(t *testing.T) *gsiGrid {
	t.Helper()
	return newGSIGridWith(t, "", "rl")
}

// newGSIGridWith is newGSIGrid with more box config and the rights
// xrootd's authorization database gives testvo on /store/vo.
func newGSIGridWith(t *testing.T, boxExtra, voRights string) *gsiGrid {
	t.Helper()
	peers.Require(t, "xrdcp")
	p := gridPKI.Get(t)
	g := &gsiGrid{PKI: p, proxies: gsiProxies(t, p)}
	g.otherKey = g.proxies["revoked"]
	g.box = startGSIBox(t, p, boxExtra)
	g.boxPort = portOf(g.box.rootHost)
	g.xrd = startGSIXrootd(t, p, voRights)
	g.xrdPort = g.xrd.port
	return g
}

// gsiURL is a root:// (or roots://) URL of a server by the name its host
// certificate holds.
func gsiURL(scheme string, port int, path string) string {
	return scheme + "://localhost:" + strconv.Itoa(port) + "/" + path
}

// Grid users read a VO-only namespace with a VOMS proxy over root:// and
// roots://, with xrdcp, xrdfs and the Python bindings of XRootD 5.5 and
// 6, from a box as from xrootd; a limited proxy reads too.
func TestGSIClients(t *testing.T) {
	g := newGSIGrid(t)
	servers := map[string]int{"box": g.boxPort, "xrootd": g.xrdPort}
	for name, port := range servers {
		for _, scheme := range []string{"root", "roots"} {
			for _, kind := range []string{"voms", "limited"} {
				env := gsiEnv(g.PKI, g.proxies[kind], "gsi")
				dst := filepath.Join(t.TempDir(), "f.txt")
				out, err := runEnv(t, env, "xrdcp", "-f", gsiURL(scheme, port, "/store/vo/f.txt"), dst)
				if b, _ := os.ReadFile(dst); err != nil || string(b) != "vo data\n" {
					t.Errorf("%s, %s://, %s proxy: xrdcp: %v\n%s", name, scheme, kind, err, out)
				}
			}
		}
		out, err := runEnv(t, gsiEnv(g.PKI, g.proxies["voms"], "gsi"), "xrdfs", "localhost:"+strconv.Itoa(port), "ls", "/store/vo")
		if err != nil || !strings.Contains(out, "/store/vo/f.txt") {
			t.Errorf("%s: xrdfs ls: %v\n%s", name, err, out)
		}
	}
	t.Run("python", func(t *testing.T) {
		pythons := []string{python(t)}
		if exec.Command("/usr/bin/python3", "-c", "import XRootD.client").Run() == nil {
			pythons = append(pythons, "/usr/bin/python3") // Debian's python3-xrootd, 5.5
		}
		var urls []string
		for _, port := range servers {
			urls = append(urls, gsiURL("root", port, "/store/vo/f.txt"), gsiURL("roots", port, "/store/vo/f.txt"))
		}
		for _, py := range pythons {
			out, err := runEnv(t, gsiEnv(g.PKI, g.proxies["voms"], "gsi"), py, append([]string{"-c", gsiPythonRead}, urls...)...)
			if err != nil || !strings.Contains(out, "ok") {
				t.Errorf("%s: %v\n%s", py, err, out)
			}
		}
	})
	for _, want := range []string{"protocol=gsi issuer=\"x509:" + x509test.RootDN + "\" subject=\"" + x509test.AliceDN + "\" groups=[/testvo]"} {
		if !strings.Contains(g.box.proc.Log.String(), want) {
			t.Errorf("the box log lacks %q", want)
		}
	}
	// The access log names the reader by DN, CA and FQANs.
	logs, err := os.ReadFile(g.box.accessLog)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"proto=root", "op=read", "issuer=\"x509:" + x509test.RootDN + "\"", "subject=\"" + x509test.AliceDN + "\"",
		"fqans=\"" + x509test.TestFQAN + "\"", "path=/store/vo/f.txt", "result=ok"}
	if !hasLine(string(logs), want...) {
		t.Errorf("the access log has no line with %q:\n%s", want, logs)
	}
}

// gsiPythonRead reads each URL given with the XRootD bindings.
const gsiPythonRead = `
import sys
from XRootD import client
for u in sys.argv[1:]:
    f = client.File()
    st, _ = f.open(u)
    assert st.ok, (u, st.message)
    st, data = f.read()
    assert st.ok and data == b"vo data\n", (u, st.message, data)
    f.close()
print("ok")
`

// gsiProbe is one hostile exchange, run on a fresh connection to each
// server; code and want are what the box must answer.
type gsiProbe struct {
	name string
	run  func(t *testing.T, c *gsiConn) gsiOutcome
	code int32
	want string
}

func hostileProbes(g *gsiGrid) []gsiProbe {
	alice, bobKey := g.proxies["voms"], g.otherKey
	start := func(t *testing.T, c *gsiConn, proxy string) *gsiClientRun {
		return newGSIClientRun(t, g.PKI, c, proxy)
	}
	padded := func(n int) []byte {
		b := &gsi.Buffer{Protocol: "gsi", Step: gsi.StepCertReq}
		b.Add(gsi.BucketMain, make([]byte, n))
		return b.Marshal()
	}
	return []gsiProbe{
		{"garbage", func(t *testing.T, c *gsiConn) gsiOutcome { return outcome(c.auth([]byte("\xde\xad\xbe\xef garbage"))) },
			proto.ErrAuthFailed, "malformed gsi buffer"},
		{"truncated first step", func(t *testing.T, c *gsiConn) gsiOutcome {
			m1 := start(t, c, alice).first()
			return outcome(c.auth(m1[:len(m1)/2]))
		}, proto.ErrAuthFailed, "malformed gsi buffer"},
		{"oversized bucket", func(t *testing.T, c *gsiConn) gsiOutcome { return outcome(c.auth(padded(200 << 10))) },
			proto.ErrAuthFailed, "gsi buffer too large"},
		{"credential over the request limit", func(t *testing.T, c *gsiConn) gsiOutcome { return outcome(c.auth(padded(300 << 10))) },
			proto.ErrArgTooLong, "exceeds the limit"},
		{"second step first", func(t *testing.T, c *gsiConn) gsiOutcome {
			return outcome(c.auth((&gsi.Buffer{Protocol: "gsi", Step: gsi.StepCert}).Marshal()))
		}, proto.ErrAuthFailed, "came before the certificate request"},
		{"another session's second step", func(t *testing.T, c *gsiConn) gsiOutcome {
			other := dialGSI(t, c.c.RemoteAddr().String())
			recorded := start(t, other, alice).second()
			start(t, c, alice).second() // this session's first step, answered
			return outcome(c.auth(recorded))
		}, proto.ErrAuthFailed, "random tag mismatch"},
		{"chain whose end key differs from the signing key", func(t *testing.T, c *gsiConn) gsiOutcome {
			return start(t, c, alice).withKeyOf(bobKey).finish()
		}, proto.ErrAuthFailed, "the public key the client sent is not its certificate's"},
	}
}

// Hostile kXR_auth exchanges, driven by hand against the box and
// against xrootd: each is refused (by the box with kXR_AuthFailed and
// the reason; a credential over the request limit with kXR_ArgTooLong),
// nothing crashes, and a client stalled between the two steps holds up
// no one. A client's challenge shaped as a DigestInfo is where the two
// differ on purpose: xrootd 5.5 signs it with its host key.
func TestGSIHostile(t *testing.T) {
	g := newGSIGrid(t)
	servers := map[string]string{"box": g.box.rootHost, "xrootd": "127.0.0.1:" + strconv.Itoa(g.xrdPort)}
	alice := g.proxies["voms"]
	start := func(t *testing.T, c *gsiConn, proxy string) *gsiClientRun {
		return newGSIClientRun(t, g.PKI, c, proxy)
	}
	probes := hostileProbes(g)
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			box := p.run(t, dialGSI(t, servers["box"]))
			if box.status != proto.StatusError || box.code != p.code || !strings.Contains(box.msg, p.want) {
				t.Errorf("box: %+v, want %d naming %q", box, p.code, p.want)
			}
			xrd := p.run(t, dialGSI(t, servers["xrootd"]))
			if xrd.status == proto.StatusOK || xrd.status == proto.StatusAuthMore {
				t.Errorf("xrootd took it: %+v", xrd)
			}
			t.Logf("xrootd: status %d, %d %q", xrd.status, xrd.code, xrd.msg)
		})
	}
	t.Run("a DigestInfo as the challenge", func(t *testing.T) {
		digestInfo := append([]byte{0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20},
			make([]byte, 32)...)
		for name, addr := range servers {
			c := dialGSI(t, addr)
			m1 := start(t, c, alice).firstWithTag(digestInfo)
			o := outcome(c.auth(m1))
			t.Logf("%s: status %d, %d %q", name, o.status, o.code, o.msg)
			if name == "box" && (o.status != proto.StatusError || !strings.Contains(o.msg, "refused to sign")) {
				t.Errorf("box: %+v, want refused to sign", o)
			}
		}
	})
	t.Run("stalled client", func(t *testing.T) {
		stalled := dialGSI(t, servers["box"])
		start(t, stalled, alice).second() // and nothing more
		began := time.Now()
		out, err := runEnv(t, gsiEnv(g.PKI, alice, "gsi"), "xrdcp", "-f", gsiURL("root", g.boxPort, "/store/vo/f.txt"), filepath.Join(t.TempDir(), "f"))
		if err != nil || time.Since(began) > 10*time.Second {
			t.Errorf("a client beside a stalled one: %v after %s\n%s", err, time.Since(began), out)
		}
	})
	select {
	case <-g.box.proc.Exited():
		t.Errorf("the box exited")
	default:
	}
}

// Writes by X.509 identities, side by side with xrootd 5.5: an
// [[auth.x509.map]] rule grants holders of testvo's group (fqan =
// "/testvo") storage.create and storage.modify on /store/vo, as an
// authorization database line "o testvo /store/vo a" grants xrootd's.
// A full VOMS proxy writes with xrdcp on both. A limited proxy is refused
// by the box, the reason in the reply, where xrootd lets it write (its
// authorization database knows no limited proxies: docs/root-protocol.md
// keeps the difference). Users no rule maps are refused by both: with a
// proxy without VOMS attributes on the public path (no scope) and on the
// VO path (not even read), with another VO's proxy on the VO path. The
// access log names the writer's DN and FQANs.
func TestGSIWrite(t *testing.T) {
	g := newGSIGridWith(t, "[[auth.x509.map]]\nfqan = \"/testvo\"\nscopes = [\"storage.create:/store/vo\", \"storage.modify:/store/vo\"]\n", "a")
	src := filepath.Join(t.TempDir(), "up.txt")
	os.WriteFile(src, []byte("up\n"), 0o644)
	noScope := func(name string) string {
		return "no [auth.x509] mapping gives " + x509test.AliceDN + " the storage.create scope for " + name +
			" (it has none; a limited proxy has read scopes only)"
	}
	for _, c := range []struct {
		kind, name string
		boxOK      bool
		says       string // in the box's refusal
		// xrdOK is xrootd 5.5.3's decision; where it differs from the
		// box's, docs/root-protocol.md says why.
		xrdOK bool
	}{
		{kind: "voms", name: "/store/vo/up-voms.txt", boxOK: true, xrdOK: true},
		{kind: "limited", name: "/store/vo/up-limited.txt", says: noScope("/store/vo/up-limited.txt"), xrdOK: true},
		{kind: "plain", name: "/store/pub/up-plain.txt", says: noScope("/store/pub/up-plain.txt")},
		{kind: "plain", name: "/store/vo/up-plain.txt", says: "certificate of " + x509test.AliceDN + " has no VOMS attributes of testvo"},
		{kind: "othervo", name: "/store/vo/up-othervo.txt", says: "VO othervo may not read /store/vo/up-othervo.txt"},
	} {
		t.Run(c.kind+" "+c.name, func(t *testing.T) {
			env := gsiEnv(g.PKI, g.proxies[c.kind], "gsi")
			out, err := runEnv(t, env, "xrdcp", "-f", src, gsiURL("root", g.boxPort, c.name))
			got, _ := os.ReadFile(filepath.Join(g.box.pool, strings.TrimPrefix(c.name, "/store/")))
			switch {
			case c.boxOK && (err != nil || string(got) != "up\n"):
				t.Errorf("box: %v, file %q\n%s", err, got, out)
			case !c.boxOK && (err == nil || !strings.Contains(out, "[3010]") || !strings.Contains(out, c.says) || got != nil):
				t.Errorf("box: %v, file %q; want 3010 saying %q:\n%s", err, got, c.says, out)
			}
			out, err = runEnv(t, env, "xrdcp", "-f", src, gsiURL("root", g.xrdPort, c.name))
			got, _ = os.ReadFile(filepath.Join(g.xrd.data, c.name))
			switch {
			case c.xrdOK && (err != nil || string(got) != "up\n"):
				t.Errorf("xrootd: %v, file %q\n%s", err, got, out)
			case !c.xrdOK && (err == nil || !strings.Contains(out, "[3010]") || got != nil):
				t.Errorf("xrootd: %v, file %q; want 3010:\n%s", err, got, out)
			}
			t.Logf("box ok=%v, xrootd ok=%v", c.boxOK, c.xrdOK)
		})
	}
	// The writer by DN, CA and FQANs.
	logs, err := os.ReadFile(g.box.accessLog)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"proto=root", "op=write", "issuer=\"x509:" + x509test.RootDN + "\"", "subject=\"" + x509test.AliceDN + "\"",
		"fqans=\"" + x509test.TestFQAN + "\"", "path=/store/vo/up-voms.txt", "result=ok"}
	if !hasLine(string(logs), want...) {
		t.Errorf("the access log has no line with %q:\n%s", want, logs)
	}
}

// hasLine reports whether some line of text holds every one of want.
func hasLine(text string, want ...string) bool {
	for _, l := range strings.Split(text, "\n") {
		all := true
		for _, w := range want {
			all = all && strings.Contains(l, w)
		}
		if all {
			return true
		}
	}
	return false
}

// A director with no X.509 trust of its own redirects a gsi user to
// the box holding the file, and the client authenticates there.
func TestGSIDirector(t *testing.T) {
	peers.Require(t, "xrdcp")
	p := gridPKI.Get(t)
	b := p.Scratch(t)
	proxy := p.VOMSProxyOf(b, p.Alice, nil).Chain
	b.OK(t)
	region := startFedNode(t, "region", "R", "[director]\nenabled = true\n")
	// The box sends clients to the name its host certificate holds:
	// XrdCl checks it against the host it was redirected to.
	spec := prepareNode(t, 0)
	box := startGSIBoxAt(t, p, spec, advertiseTo(region, "500ms")+"root_url = \"root://localhost:"+strconv.Itoa(spec.rp)+"\"\n")
	waitFor(t, 15*time.Second, "the box in the director's registry", func() bool {
		out, _ := runEnv(t, nil, siteboxBin, "federation", region.httpsURL, "--ca", region.certFile, "--json")
		return strings.Contains(out, `"gsi"`)
	})
	authed := func() int { return strings.Count(box.proc.Log.String(), "protocol=gsi issuer=") }
	before := authed()
	dst := filepath.Join(t.TempDir(), "p.txt")
	// The director locates files anonymously, so the file is public;
	// what counts is that the redirected client authenticates at the box.
	out, err := runEnv(t, gsiEnv(p, proxy, "gsi"), "xrdcp", "-f", "root://localhost:"+strconv.Itoa(portOf(region.rootHost))+"//store/pub/p.txt", dst)
	if b, _ := os.ReadFile(dst); err != nil || string(b) != "public data\n" {
		t.Fatalf("through the director: %v\n%s", err, out)
	}
	if authed() == before {
		t.Errorf("the redirected client did not authenticate at the box with gsi")
	}
}
