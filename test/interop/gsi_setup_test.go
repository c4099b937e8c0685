package interop

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"net"
	"os"
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

// gsiBox is a box taking X.509 proxies: the grid's host certificate as
// its https (and so gsi) credential, /store/vo readable by testvo only,
// /store/pub public, an access log; extra is more config. Its pool holds
// vo/f.txt and pub/p.txt.
type gsiBox struct {
	*fedNode
	pool, accessLog string
}

func startGSIBox(t *testing.T, p *x509test.PKI, extra string) *gsiBox {
	t.Helper()
	return startGSIBoxAt(t, p, prepareNode(t, 0), extra)
}

// startGSIBoxAt is startGSIBox with the node's ports chosen beforehand.
func startGSIBoxAt(t *testing.T, p *x509test.PKI, spec nodeSpec, extra string) *gsiBox {
	t.Helper()
	pool := t.TempDir()
	for name, data := range map[string]string{"vo/f.txt": "vo data\n", "pub/p.txt": "public data\n"} {
		os.MkdirAll(filepath.Join(pool, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(pool, name), []byte(data), 0o644)
	}
	log := filepath.Join(t.TempDir(), "access.log")
	spec.server = "access_log = " + strconv.Quote(log) + "\n"
	run(t, false, siteboxBin, "token", "keygen", "--state-dir", spec.state)
	conf := "cert = " + strconv.Quote(p.Host.Cert) + "\nkey = " + strconv.Quote(p.Host.Key) + "\n" +
		"[[export]]\nprefix = \"/store\"\npools = [" + strconv.Quote(pool) + "]\n" +
		// The site issuer speaks for testvo, so the namespace passes the
		// check that some credential can assert its VO.
		"[auth]\nsite_issuer = true\nsite_issuer_vos = [\"" + x509test.TestVO + "\"]\n" +
		"[[auth.namespace]]\nprefix = \"/store/vo\"\nread = \"vo\"\nvos = [\"" + x509test.TestVO + "\"]\n" +
		"[auth.x509]\ncert_dir = " + strconv.Quote(p.CADir) + "\nvoms_dir = " + strconv.Quote(p.VOMSDir) + "\n" + extra
	return &gsiBox{fedNode: spec.start(t, "gsi", "T3", conf), pool: pool, accessLog: log}
}

// gsiXrootd is xrootd 5.5 with gsi and libXrdVoms, side by side with
// the box: the same files, gsi the only protocol, and an authorization
// database giving VO testvo voRights ("rl": read, "a": all) on
// /store/vo and everyone read on /store/pub; extra are more directives.
type gsiXrootd struct {
	port int
	data string // its data directory, the namespace's root
	log  string // its log file
}

func startGSIXrootd(t *testing.T, p *x509test.PKI, voRights string, extra ...string) *gsiXrootd {
	t.Helper()
	peers.Require(t, "xrootd")
	peers.RequireFile(t, "/usr/lib/x86_64-linux-gnu/libXrdVoms-5.so", "XRootD's VOMS plugin (xrootd-voms-plugins)")
	work, data := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{"store/vo/f.txt": "vo data\n", "store/pub/p.txt": "public data\n"} {
		os.MkdirAll(filepath.Join(data, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(data, name), []byte(body), 0o644)
	}
	// xrootd runs as its own user, which may not enter the test PKI: it
	// gets copies, the key readable by it alone (it refuses others).
	sec := filepath.Join(work, "sec")
	for src, dst := range map[string]string{p.CADir: "certificates", p.VOMSDir: "vomsdir"} {
		os.MkdirAll(filepath.Join(sec, dst), 0o755)
		copyTree(t, src, filepath.Join(sec, dst))
	}
	copyFile(t, p.Host.Cert, filepath.Join(sec, "host.pem"), 0o644)
	copyFile(t, p.Host.Key, filepath.Join(sec, "host.key"), 0o400)
	authdb := filepath.Join(work, "authdb")
	os.WriteFile(authdb, []byte("o "+x509test.TestVO+" /store/vo "+voRights+"\nu * /store/pub rl\n"), 0o644)
	port, _ := peers.FreePort()
	name := "interop-gsi-" + strconv.Itoa(port)
	x, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{
		DataDir: data, Port: port, Name: name, WorkDir: work,
		Extra: append([]string{
			"xrootd.seclib libXrdSec.so",
			"sec.protocol gsi -ca:verifyss -crl:try -certdir:" + filepath.Join(sec, "certificates") +
				" -crldir:" + filepath.Join(sec, "certificates") + // else CRLs are read from /etc/grid-security/certificates
				" -cert:" + filepath.Join(sec, "host.pem") + " -key:" + filepath.Join(sec, "host.key") +
				" -gmapopt:nomap -vomsat:extract -vomsfun:libXrdVoms-5.so -vomsfunparms:certfmt=raw|vos=" + x509test.TestVO + "|grpopt=useall",
			"sec.protbind * only gsi",
			// roots:// too, with the same host credential.
			"xrd.tls " + filepath.Join(sec, "host.pem") + " " + filepath.Join(sec, "host.key"),
			"xrd.tlsca certdir " + filepath.Join(sec, "certificates"),
			"ofs.authorize 1",
			"acc.authdb " + authdb,
		}, extra...),
		Env: []string{"X509_CERT_DIR=" + filepath.Join(sec, "certificates"), "X509_VOMS_DIR=" + filepath.Join(sec, "vomsdir")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Stop)
	return &gsiXrootd{port: port, data: data, log: filepath.Join(work, "log", name, "xrootd.log")}
}

// gsiEnv is an XRootD client's environment for a proxy file; protocols
// is XrdSecPROTOCOL ("gsi", or "gsi,unix" to see a refusal's reason in
// the reply of the request that follows).
func gsiEnv(p *x509test.PKI, proxy, protocols string) []string {
	return []string{"X509_USER_PROXY=" + proxy, "X509_CERT_DIR=" + p.CADir, "XrdSecPROTOCOL=" + protocols}
}

// gsiConn is a raw root:// connection for driving the gsi exchange
// by hand, against the box and against xrootd alike.
type gsiConn struct {
	rootConn
	offer string // the login's gsi entry, after "&P="
}

// dialGSI connects and logs in, returning the gsi offer of the login.
func dialGSI(t *testing.T, hostport string) *gsiConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", hostport, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := &gsiConn{rootConn: rootConn{c: c, next: 1}}
	var hs [20]byte
	binary.BigEndian.PutUint32(hs[12:], proto.HandshakeFourth)
	binary.BigEndian.PutUint32(hs[16:], proto.HandshakeFifth)
	if err := r.write(hs[:]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.recv(); err != nil {
		t.Fatal(err)
	}
	var pb, lb [16]byte
	binary.BigEndian.PutUint32(pb[0:], proto.ProtocolVersion)
	copy(lb[4:], "raw")
	if st, _, err := r.call(proto.ReqProtocol, pb, nil); err != nil || st != proto.StatusOK {
		t.Fatalf("kXR_protocol: %d %v", st, err)
	}
	st, body, err := r.call(proto.ReqLogin, lb, nil)
	if err != nil || st != proto.StatusOK {
		t.Fatalf("kXR_login: %d %v", st, err)
	}
	// The security part follows the 16-byte session id, which xrootd
	// leaves out for a client that states no capability version (as
	// this one): it is found by its marker.
	sec := string(body)
	if i := strings.Index(sec, "&P="); i >= 0 {
		sec = sec[i:]
	}
	for _, p := range strings.Split(strings.TrimRight(sec, "\x00"), "&P=") {
		if strings.HasPrefix(p, "gsi,") {
			r.offer = p
		}
	}
	if r.offer == "" {
		t.Fatalf("the login offers no gsi: %q", body)
	}
	return r
}

// auth sends one gsi kXR_auth step; err is a transport error.
func (r *gsiConn) auth(cred []byte) (uint16, []byte, error) {
	var ab [16]byte
	copy(ab[12:], "gsi")
	return r.call(proto.ReqAuth, ab, cred)
}

// gsiOutcome is how a server answered a gsi step.
type gsiOutcome struct {
	status uint16
	code   int32
	msg    string
}

func outcome(st uint16, body []byte, err error) gsiOutcome {
	if err != nil {
		return gsiOutcome{msg: "connection: " + err.Error()}
	}
	o := gsiOutcome{status: st}
	if xe, ok := kxrError(body).(*xrdErr); ok && st == proto.StatusError {
		o.code, o.msg = xe.code, xe.msg
	}
	return o
}

// exchange runs the whole exchange with the proxy file and returns the
// answer to the last step sent.
func (r *gsiConn) exchange(t *testing.T, p *x509test.PKI, proxyFile string) gsiOutcome {
	t.Helper()
	return newGSIClientRun(t, p, r, proxyFile).finish()
}

// gsiClientRun is one exchange driven by hand on a connection, with
// the chain and key of a proxy file (or, to see it refused, a key of
// another).
type gsiClientRun struct {
	t     *testing.T
	p     *x509test.PKI
	c     *gsiConn
	chain []*x509.Certificate
	key   *rsa.PrivateKey
	cl    *gsi.Client
}

func newGSIClientRun(t *testing.T, p *x509test.PKI, c *gsiConn, proxyFile string) *gsiClientRun {
	t.Helper()
	chain, key := readProxy(t, proxyFile)
	return &gsiClientRun{t: t, p: p, c: c, chain: chain, key: key}
}

// withKeyOf signs with the key of another proxy file.
func (r *gsiClientRun) withKeyOf(proxyFile string) *gsiClientRun {
	_, r.key = readProxy(r.t, proxyFile)
	return r
}

func (r *gsiClientRun) client() *gsi.Client {
	r.t.Helper()
	if r.cl == nil {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM([]byte(mustRead(r.t, r.p.Root.Cert)))
		// WeakDH: xrootd 5.5 agrees keys on 512-bit groups.
		cl, err := gsi.NewClient(gsi.ClientConfig{Chain: r.chain, Key: r.key, Roots: roots, ServerName: "localhost", WeakDH: true})
		if err != nil {
			r.t.Fatal(err)
		}
		r.cl = cl
	}
	return r.cl
}

// first is step 1000 for the connection's offer, unsent.
func (r *gsiClientRun) first() []byte {
	r.t.Helper()
	m1, err := r.client().Start(r.c.offer)
	if err != nil {
		r.t.Fatal(err)
	}
	return m1
}

// firstWithTag is step 1000 carrying tag as the client's challenge.
func (r *gsiClientRun) firstWithTag(tag []byte) []byte {
	r.t.Helper()
	b, err := gsi.ParseBuffer(r.first())
	if err != nil {
		r.t.Fatal(err)
	}
	main := &gsi.Buffer{Protocol: "gsi", Step: gsi.StepCertReq}
	main.Add(gsi.BucketRandomTag, tag)
	for i := range b.Buckets {
		if b.Buckets[i].Type == gsi.BucketMain {
			b.Buckets[i].Data = main.Marshal()
		}
	}
	return b.Marshal()
}

// second sends step 1000 and returns step 1001, unsent.
func (r *gsiClientRun) second() []byte {
	r.t.Helper()
	st, body, err := r.c.auth(r.first())
	if err != nil || st != proto.StatusAuthMore {
		r.t.Fatalf("step 1000: %+v", outcome(st, body, err))
	}
	m2, err := r.client().Continue(body)
	if err != nil {
		r.t.Fatalf("the client refused the server's step 2001: %v", err)
	}
	return m2
}

// finish runs the exchange and returns the answer to the last step
// sent.
func (r *gsiClientRun) finish() gsiOutcome {
	r.t.Helper()
	st, body, err := r.c.auth(r.first())
	if err != nil || st != proto.StatusAuthMore {
		return outcome(st, body, err)
	}
	m2, err := r.client().Continue(body)
	if err != nil {
		r.t.Fatalf("the client refused the server's step 2001: %v", err)
	}
	return outcome(r.c.auth(m2))
}

// readProxy reads a proxy file: its certificates in order, and the key.
func readProxy(t *testing.T, file string) ([]*x509.Certificate, *rsa.PrivateKey) {
	t.Helper()
	var chain []*x509.Certificate
	var key *rsa.PrivateKey
	rest := []byte(mustRead(t, file))
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		switch b.Type {
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			chain = append(chain, c)
		case "RSA PRIVATE KEY":
			k, err := x509.ParsePKCS1PrivateKey(b.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			key = k
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			key = k.(*rsa.PrivateKey)
		}
	}
	if len(chain) == 0 || key == nil {
		t.Fatalf("%s: no chain or key", file)
	}
	return chain, key
}
