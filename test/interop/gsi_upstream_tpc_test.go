package interop

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sitebox/test/peers"
)

// TestXrdcpTPCFromGSIXrootd: `xrdcp --tpc only` from an xrootd 5.5 that
// accepts only gsi into a box. The box, as destination, logs in at the
// source to pull with the rendezvous key, and the source asks it for
// gsi. The source is the user's choice, so the box presents its own
// proxy ([tpc] proxy_file) only to the servers [tpc] proxy_hosts lists:
// a box without them refuses the copy and says so; a box listing the
// source pulls the file with its proxy.
func TestXrdcpTPCFromGSIXrootd(t *testing.T) {
	peers.Require(t, "xrdcp")
	p := gridPKI.Get(t)
	x := startGSIXrootd(t, p, "rl", "ofs.tpc pgm /usr/bin/xrdcp --server")
	// alice copies; the box's proxy is Bob's, its robot.
	sb := p.Scratch(t)
	user := p.VOMSProxyOf(sb, p.Alice, nil).Chain
	robot := p.VOMSProxyOf(sb, p.Bob, nil).Chain
	sb.OK(t)
	box := func(name, extra string) (*fedNode, string) {
		pool := t.TempDir()
		conf := "[[export]]\nprefix = \"/store\"\npools = [" + strconv.Quote(pool) + "]\n" +
			"[auth.x509]\ncert_dir = " + strconv.Quote(p.CADir) + "\nvoms_dir = " + strconv.Quote(p.VOMSDir) + "\n" +
			"[tpc]\nallow = [\"localhost\", \"127.0.0.1\"]\n" + extra
		return startFedNode(t, name, "T3", conf), pool
	}
	src := "root://localhost:" + strconv.Itoa(x.port) + "//store/pub/p.txt"
	env := gsiEnv(p, user, "gsi,unix") // gsi at the source, unix at the box

	t.Run("source not listed", func(t *testing.T) {
		b, pool := box("tpcplain", "")
		out, err := runEnv(t, env, "xrdcp", "-f", "--tpc", "only", src, b.rootURL+"//store/p.txt")
		if err == nil {
			t.Fatalf("the copy went through without a credential for the gsi source: %s", out)
		}
		noFile(t, filepath.Join(pool, "p.txt"))
		log := b.proc.Log.String()
		if !strings.Contains(log, "proxy_hosts") || !strings.Contains(log, "gsi") {
			t.Errorf("the box's log does not say why:\n%s", tail(log, 3000))
		}
		if !strings.Contains(out, "proxy_hosts") {
			t.Errorf("xrdcp's message does not say why: %s", out)
		}
	})
	t.Run("source listed", func(t *testing.T) {
		b, pool := box("tpcproxy", "proxy_file = "+strconv.Quote(robot)+"\nproxy_hosts = [\"localhost\"]\n")
		if out, err := runEnv(t, env, "xrdcp", "-f", "--tpc", "only", src, b.rootURL+"//store/p.txt"); err != nil {
			t.Fatalf("xrdcp --tpc only from the gsi source: %v\n%s\nbox log:\n%s", err, out, tail(b.proc.Log.String(), 3000))
		}
		sameFile(t, filepath.Join(pool, "p.txt"), []byte("public data\n"))
		vo := "root://localhost:" + strconv.Itoa(x.port) + "//store/vo/f.txt"
		if out, err := runEnv(t, env, "xrdcp", "-f", "--tpc", "only", vo, b.rootURL+"//store/f.txt"); err != nil {
			t.Fatalf("xrdcp --tpc only of the VO file: %v\n%s", err, out)
		}
		if got, _ := os.ReadFile(filepath.Join(pool, "f.txt")); string(got) != "vo data\n" {
			t.Errorf("copied %q", got)
		}
	})
}

// TestHTTPTPCFromXrdHTTPWithProxy: HTTP-TPC pulls (COPY with Source)
// into a box from XrdHttp 5.5 with the VOMS extractor, whose
// authorization database lets only VO testvo read /vo. The box presents
// its proxy as the TLS client certificate only to the sources [tpc]
// proxy_hosts lists ("localhost" here): from the same server named
// 127.0.0.1 the box goes without it, the source refuses it and nothing
// lands.
func TestHTTPTPCFromXrdHTTPWithProxy(t *testing.T) {
	peers.Require(t, "curl")
	c := makeGridCreds(t)
	x := startXrdHTTPVOMS(t, c)
	port := x.url[strings.LastIndex(x.url, ":")+1:]
	pool := t.TempDir()
	b := startFedNode(t, "httptpc", "T3", "[[export]]\nprefix = \"/store\"\npools = ["+strconv.Quote(pool)+"]\n"+
		"[auth.x509]\ncert_dir = "+strconv.Quote(c.pki.CADir)+"\nvoms_dir = "+strconv.Quote(c.pki.VOMSDir)+"\n"+
		"[tpc]\nallow = [\"localhost\", \"127.0.0.1\"]\nproxy_file = "+strconv.Quote(c.voms)+"\nproxy_hosts = [\"localhost\"]\n")
	for _, tc := range []struct {
		name, source string
		ok           bool
	}{
		{"source not listed", "https://127.0.0.1:" + port + "/vo/f", false},
		{"source listed", "https://localhost:" + port + "/vo/f", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := "/store/" + strings.ReplaceAll(tc.name, " ", "-")
			out, _ := run(t, true, "curl", "-sS", "-w", "\n%{http_code}", "--cacert", b.certFile, "-X", "COPY",
				"-H", "Source: "+tc.source, "-H", "Credential: none", b.httpsURL+dst)
			st, err := os.Stat(filepath.Join(pool, filepath.Base(dst)))
			switch {
			case tc.ok && (err != nil || st.Size() != 4096):
				t.Errorf("the pull with the box's proxy: %s (landed: %v)", out, err)
			case !tc.ok && err == nil:
				t.Errorf("a pull without the box's proxy landed %d bytes: %s", st.Size(), out)
			case !tc.ok && !strings.Contains(out, "403"):
				t.Errorf("the refusal does not carry the source's 403: %s", out)
			}
		})
	}
}
