package interop

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"sitebox/test/peers"
)

const tpcProtectedPolicy = `
[[auth.namespace]]
prefix = "/store/priv"
read = "token"
protection = "privacy"

[[auth.namespace]]
prefix = "/store/integ"
read = "token"
protection = "integrity"

[[auth.namespace]]
prefix = "/store/open"
read = "token"
`

// plainPeer is an http:// server that answers any request for a file of
// 1 MiB (PROPFIND, GET, PUT) and records every request it was sent.
type plainPeer struct {
	url  string
	mu   sync.Mutex
	reqs []string
}

func startPlainPeer(t *testing.T) *plainPeer {
	p := &plainPeer{}
	data := make([]byte, 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.reqs = append(p.reqs, r.Method+" "+r.URL.Path)
		p.mu.Unlock()
		switch r.Method {
		case "PROPFIND":
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(207)
			fmt.Fprintf(w, `<?xml version="1.0"?><D:multistatus xmlns:D="DAV:"><D:response><D:href>%s</D:href><D:propstat><D:prop><D:getcontentlength>%d</D:getcontentlength><D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>`, r.URL.Path, len(data))
		case http.MethodGet:
			w.Write(data)
		case http.MethodPut:
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusCreated)
		default:
			http.Error(w, "no", http.StatusMethodNotAllowed)
		}
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

func (p *plainPeer) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reqs...)
}

// TestTPCProtectedNamespaces: a privacy or integrity namespace moves no
// byte over a plain connection in a third-party copy, whichever way the
// data goes and whichever frontend runs the copy: HTTP-TPC push to and
// pull from http://, a pull from an https:// server that redirects to
// http://, and a root:// TPC from a plain root:// source (a real xrootd)
// are refused before anything moves, naming the namespace and the
// server; the plain server is never contacted. The same copies over TLS
// (another box over https:// and roots://) run, and the same plain
// copies into an unprotected namespace run too.
func TestTPCProtectedNamespaces(t *testing.T) {
	peers.Require(t, "curl")
	peers.Require(t, "xrdcp")
	peers.Require(t, "xrootd")
	bundle := tpcTrust(t)
	poolA := t.TempDir()
	a := startIssuerNode(t, "a", "A", "[[export]]\nprefix = \"/store\"\npools = [\""+poolA+"\"]\n"+tpcProtectedPolicy+tpcAllowLoopbackTOML)
	b := startBox(t, 1, tpcAllowLoopback...)
	plain := startPlainPeer(t)
	// An https:// server that sends every request on to the plain one.
	downgrade := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.url+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(downgrade.Close)
	downgradeCert := filepath.Join(t.TempDir(), "downgrade.pem")
	os.WriteFile(downgradeCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: downgrade.Certificate().Raw}), 0o644)
	trustCerts(t, bundle, a.certFile, b.certFile, downgradeCert)

	data := writeRandom(t, filepath.Join(b.pools[0], "src.bin"), 2<<20+3)
	for _, ns := range []string{"priv", "integ", "open"} {
		os.MkdirAll(filepath.Join(poolA, ns), 0o755)
		os.WriteFile(filepath.Join(poolA, ns, "f.bin"), data, 0o644)
	}
	tok := a.token(t, "u", "", "storage.read:/store,storage.create:/store,storage.modify:/store")
	copyAs := func(target string, hdr ...string) (code, body string) {
		args := []string{"-sS", "--cacert", a.certFile, "-X", "COPY", "-w", "\n%{http_code}",
			"-H", "Authorization: Bearer " + tok, "-H", "Credential: none"}
		for _, h := range hdr {
			args = append(args, "-H", h)
		}
		out, _ := run(t, true, "curl", append(args, target)...)
		i := strings.LastIndex(out, "\n")
		return out[i+1:], out[:i]
	}

	for _, ns := range []string{"priv", "integ", "open"} {
		protected := ns != "open"
		want := func(what, code, body, plainURL string, landed string) {
			t.Helper()
			if !protected {
				if code != "202" {
					t.Errorf("/store/%s %s: %s %q, want it to start (the namespace is not protected)", ns, what, code, body)
				}
				return
			}
			if code != "403" || !strings.Contains(body, "/store/"+ns+" requires") || !strings.Contains(body, plainURL) || !strings.Contains(body, "use an https:// or roots:// URL") {
				t.Errorf("/store/%s %s: %s %q, want 403 naming the namespace and %s", ns, what, code, body, plainURL)
			}
			if landed != "" {
				noFile(t, landed)
			}
		}
		before := len(plain.requests())
		code, body := copyAs(a.httpsURL+"/store/"+ns+"/f.bin", "Destination: "+plain.url+"/pushed-"+ns)
		want("push to http://", code, body, plain.url+"/pushed-"+ns, "")
		code, body = copyAs(a.httpsURL+"/store/"+ns+"/pulled.bin", "Source: "+plain.url+"/src")
		want("pull from http://", code, body, plain.url+"/src", filepath.Join(poolA, ns, "pulled.bin"))
		if got := plain.requests()[before:]; protected && len(got) != 0 {
			t.Errorf("/store/%s: the plain server was sent %q by refused copies", ns, got)
		}

		// Over TLS both ways run.
		code, body = copyAs(a.httpsURL+"/store/"+ns+"/f.bin", "Destination: "+b.httpsURL+"/store/pushed-"+ns+".bin")
		if code != "202" || !strings.Contains(body, "success: Created") {
			t.Errorf("/store/%s push to https://: %s %q", ns, code, body)
		}
		sameFile(t, filepath.Join(b.pools[0], "pushed-"+ns+".bin"), data)
		code, body = copyAs(a.httpsURL+"/store/"+ns+"/tls.bin", "Source: "+b.httpsURL+"/store/src.bin")
		if code != "202" || !strings.Contains(body, "success: Created") {
			t.Errorf("/store/%s pull from https://: %s %q", ns, code, body)
		}
		sameFile(t, filepath.Join(poolA, ns, "tls.bin"), data)
	}

	// An https:// source that redirects to http:// is refused, for any
	// namespace: what was asked over TLS stays over TLS.
	before := len(plain.requests())
	code, body := copyAs(a.httpsURL+"/store/priv/redirected.bin", "Source: "+downgrade.URL+"/src")
	if code != "403" || !strings.Contains(body, "redirected from https:// to plain "+plain.url) {
		t.Errorf("pull from an https:// source redirecting to http://: %s %q, want 403 naming the plain URL", code, body)
	}
	noFile(t, filepath.Join(poolA, "priv", "redirected.bin"))
	if got := plain.requests()[before:]; len(got) != 0 {
		t.Errorf("the plain server was sent %q after a redirect", got)
	}

	t.Run("root:// TPC", func(t *testing.T) {
		xdata := t.TempDir()
		os.WriteFile(filepath.Join(xdata, "src.bin"), data, 0o644)
		xp, _ := peers.FreePort()
		x, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{
			DataDir: xdata, Port: xp, Name: "tpc-priv-" + strconv.Itoa(xp), WorkDir: t.TempDir(),
			Extra: []string{"ofs.tpc pgm /usr/bin/xrdcp --server", "xrootd.chksum adler32"},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(x.Stop)
		env := xrdEnv(certDir(t, a.fedNode, &fedNode{box: b}), tok)
		plainSrc := "root://127.0.0.1:" + strconv.Itoa(xp) + "//src.bin"
		for _, ns := range []string{"priv", "integ"} {
			out, err := runEnv(t, env, "xrdcp", "-f", "--tpc", "only", plainSrc, "roots://"+a.rootHost+"//store/"+ns+"/x.bin")
			if err == nil || !strings.Contains(out, "/store/"+ns+" requires") || !strings.Contains(out, ":"+strconv.Itoa(xp)+"/src.bin would move its data unencrypted") {
				t.Errorf("xrdcp --tpc from plain root:// xrootd into /store/%s: %v, want a refusal naming the namespace and the source\n%s", ns, err, out)
			}
			noFile(t, filepath.Join(poolA, ns, "x.bin"))
			// From a roots:// source (another box) the copy runs.
			out, err = runEnv(t, env, "xrdcp", "-f", "--tpc", "only", "roots://"+b.rootHost+"//store/src.bin", "roots://"+a.rootHost+"//store/"+ns+"/tls-root.bin")
			if err != nil {
				t.Errorf("xrdcp --tpc from roots:// into /store/%s: %v\n%s", ns, err, out)
			} else {
				sameFile(t, filepath.Join(poolA, ns, "tls-root.bin"), data)
			}
		}
		out, err := runEnv(t, env, "xrdcp", "-f", "--tpc", "only", plainSrc, "roots://"+a.rootHost+"//store/open/x.bin")
		if err != nil {
			t.Errorf("xrdcp --tpc from plain root:// into an unprotected namespace: %v\n%s", err, out)
		} else {
			sameFile(t, filepath.Join(poolA, "open", "x.bin"), data)
		}
	})
}
