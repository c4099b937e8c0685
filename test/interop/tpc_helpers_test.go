package interop

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// Boxes refuse third-party copies with loopback servers unless told
// ([tpc] allow); the TPC tests run every server on 127.0.0.1.
var tpcAllowLoopback = []string{"--tpc-allow", "127.0.0.1"}

const tpcAllowLoopbackTOML = "\n[tpc]\nallow = [\"127.0.0.1\"]\n"

// tpcTrust makes the boxes started after it trust each other's (and the
// XrdHttp peer's) self-signed certificates when they act as the client of
// a third-party copy: Go reads SSL_CERT_FILE when it first verifies a
// server, after every box has written its certificate; the test fills the
// bundle with trustCerts once they all exist.
func tpcTrust(t *testing.T) string {
	bundle := filepath.Join(t.TempDir(), "bundle.pem")
	if err := os.WriteFile(bundle, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", bundle)
	return bundle
}

func trustCerts(t *testing.T, bundle string, certs ...string) {
	var all []byte
	for _, c := range certs {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if err := os.WriteFile(bundle, all, 0o644); err != nil {
		t.Fatal(err)
	}
}

// xrdHTTP is a real XRootD 5.5 server with XrdHttp and its TPC handler.
type xrdHTTP struct {
	url  string // https://127.0.0.1:PORT
	root string // 127.0.0.1:PORT of its root:// service
	data string
}

// startXrdHTTP serves data over https with XrdHttpTPC. In 5.5.3 the TPC
// handler loads only with TLS, so the server uses cert/key (a box's) and
// trusts the CA directory made of trusted (the boxes' certificates) for
// the copies it drives.
func startXrdHTTP(t *testing.T, cert, key string, trusted ...string) *xrdHTTP {
	t.Helper()
	return startXrdHTTPConf(t, cert, key, nil, trusted...)
}

// startXrdHTTPConf is startXrdHTTP with more lines of xrootd config,
// which override the ones before.
func startXrdHTTPConf(t *testing.T, cert, key string, extra []string, trusted ...string) *xrdHTTP {
	t.Helper()
	peers.Require(t, "xrootd")
	peers.Require(t, "openssl")
	work := t.TempDir()
	data := filepath.Join(work, "data")
	caDir := filepath.Join(work, "ca")
	xwork := filepath.Join(work, "x") // given to the xrootd user with its key
	for _, d := range []string{data, caDir, xwork} {
		os.MkdirAll(d, 0o755)
	}
	copyTo := func(src, dst string, mode os.FileMode) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, mode); err != nil {
			t.Fatal(err)
		}
	}
	copyTo(cert, filepath.Join(xwork, "cert.pem"), 0o644)
	copyTo(key, filepath.Join(xwork, "key.pem"), 0o600)
	for i, c := range trusted {
		copyTo(c, filepath.Join(caDir, fmt.Sprintf("ca%d.pem", i)), 0o644)
	}
	if out, err := exec.Command("openssl", "rehash", caDir).CombinedOutput(); err != nil {
		t.Fatalf("openssl rehash: %v %s", err, out)
	}
	rp, _ := peers.FreePort()
	hp, _ := peers.FreePort()
	p, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{
		DataDir: data, Port: rp, Name: "tpc-" + strconv.Itoa(hp), WorkDir: xwork,
		Extra: append([]string{
			"xrd.tls " + filepath.Join(xwork, "cert.pem") + " " + filepath.Join(xwork, "key.pem"),
			"xrd.tlsca certdir " + caDir,
			"xrd.protocol XrdHttp:" + strconv.Itoa(hp) + " libXrdHttp.so",
			"http.exthandler xrdtpc libXrdHttpTPC.so",
			"xrootd.chksum adler32",
		}, extra...),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	waitListening(t, "127.0.0.1:"+strconv.Itoa(hp))
	return &xrdHTTP{url: "https://127.0.0.1:" + strconv.Itoa(hp), root: "127.0.0.1:" + strconv.Itoa(rp), data: data}
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listened: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// gfalCopy runs gfal-copy with checksum verification. A token makes
// gfal2 send "Credential: none" (without one it asks for gridsite
// delegation, which XrdHttp refuses); the peers here check no tokens.
func gfalCopy(t *testing.T, mode, src, dst string) (string, error) {
	t.Helper()
	peers.Require(t, "gfal-copy")
	args := []string{"-f", "-K", "ADLER32", "-D", "HTTP PLUGIN:INSECURE=true"}
	if mode != "" {
		args = append(args, "--copy-mode", mode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "gfal-copy", append(args, src, dst)...)
	cmd.Env = append(os.Environ(), "BEARER_TOKEN=tpc-test")
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		// gfal-copy looks for "python" first, which Debian 12 lacks, and
		// its modules are in the system Python, not a venv's.
		cmd.Env = append(cmd.Env, "GFAL_PYTHONBIN=/usr/bin/python3")
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tpcCurl sends a COPY with curl and returns the response body.
func tpcCurl(t *testing.T, cacert, target string, hdr ...string) string {
	t.Helper()
	args := []string{"-sS", "--cacert", cacert, "-X", "COPY"}
	for _, h := range hdr {
		args = append(args, "-H", h)
	}
	out, _ := run(t, false, "curl", append(args, target)...)
	return out
}

// slowSource is an http:// WebDAV source of one file of size bytes whose
// GETs trickle the data out over about seven seconds, longer than the
// interval between performance markers.
func slowSource(t *testing.T, data []byte) string {
	return fakeSource(t, len(data), func(w http.ResponseWriter, r *http.Request) {
		start, end := 0, len(data)-1
		if rg := r.Header.Get("Range"); rg != "" {
			fmt.Sscanf(rg, "bytes=%d-%d", &start, &end)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, len(data)))
			w.Header().Set("Content-Length", strconv.Itoa(end-start+1))
			w.WriteHeader(http.StatusPartialContent)
		}
		part := data[start : end+1]
		step := len(part)/7 + 1
		for len(part) > 0 {
			n := min(step, len(part))
			w.Write(part[:n])
			w.(http.Flusher).Flush()
			part = part[n:]
			time.Sleep(time.Second)
		}
	})
}

// cutSource is an http:// WebDAV source that answers PROPFIND for one
// file of size bytes and then sends only half of any GET before cutting
// the connection: a source that dies mid-copy.
func cutSource(t *testing.T, size int) string {
	return fakeSource(t, size, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(strings.Repeat("x", size/2)))
		panic(http.ErrAbortHandler) // cut the connection
	})
}

// fakeSource answers PROPFIND for any path as a file of size bytes and
// GET with get.
func fakeSource(t *testing.T, size int, get http.HandlerFunc) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case "PROPFIND":
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(207)
			fmt.Fprintf(w, `<?xml version="1.0"?><D:multistatus xmlns:D="DAV:"><D:response><D:href>%s</D:href><D:propstat><D:prop><D:getcontentlength>%d</D:getcontentlength><D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>`, r.URL.Path, size)
		case http.MethodGet:
			get(w, r)
		default:
			http.Error(w, "no", http.StatusMethodNotAllowed)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// xrootdUID is the uid xrootd runs as, so files put into its data
// directory after it started stay writable by it.
func xrootdUID(t *testing.T) int {
	u, err := user.Lookup("xrootd")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	return uid
}
