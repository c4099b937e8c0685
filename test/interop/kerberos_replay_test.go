package interop

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/xrootd/proto"
	"sitebox/test/peers"
)

// An AP-REQ captured on plain root:// (here by a relay between xrdcp and
// the box) is refused when replayed, and still refused after the box
// restarts within the clock skew: the replay cache is kept in the state
// dir, as MIT's acceptor keeps its rcache.
func TestKerberosReplayAfterRestart(t *testing.T) {
	peers.Require(t, "xrdcp")
	peers.RequireFile(t, "/usr/lib/x86_64-linux-gnu/libXrdSeckrb5-5.so", "XRootD's krb5 client plugin (libxrootd-client)")
	kdc := startKDC(t, krbRealm)
	keytab := kdc.servicePrincipals(t, "xrootd/localhost", "HTTP/localhost")
	kdc.user(t, "alice", "alice-pw")
	box, _ := kerberosBox(t, kdc, keytab, "", "")
	alice := append(kdc.kinit(t, "alice", "alice-pw"), "XrdSecPROTOCOL=krb5")

	relay := startRecordingRelay(t, box.rootHost)
	url := "root://localhost:" + strconv.Itoa(portOf(relay.addr)) + "//store/data/run1.root"
	if out, err := runEnv(t, alice, "xrdcp", "-f", url, filepath.Join(t.TempDir(), "run1.root")); err != nil {
		t.Fatalf("alice reads through the relay: %v\n%s", err, out)
	}
	captured := relay.authRequest(t)

	if err := replayAuth(box.rootHost, captured); err == nil || !strings.Contains(err.Error(), "replay") {
		t.Fatalf("the captured AP-REQ replayed to the running box: %v, want a replay refusal", err)
	}
	restart(t, box)
	if err := replayAuth(box.rootHost, captured); err == nil || !strings.Contains(err.Error(), "replay") {
		t.Fatalf("the captured AP-REQ replayed after a restart: %v, want a replay refusal", err)
	}
	// Fresh credentials still work after the restart.
	if out, err := runEnv(t, alice, "xrdcp", "-f", box.rootURL+"//store/data/run1.root", filepath.Join(t.TempDir(), "again")); err != nil {
		t.Fatalf("alice reads after the restart: %v\n%s", err, out)
	}
}

// restart stops the box and starts it again from the same config and
// state dir, on the same ports.
func restart(t *testing.T, b *fedNode) {
	t.Helper()
	b.proc.Stop()
	conf := filepath.Join(b.state, "sitebox.toml")
	ports := []int{portOf(b.rootHost), portOf(strings.TrimPrefix(b.httpsURL, "https://"))}
	p, err := peers.StartSitebox(context.Background(), siteboxBin, ports, "serve", "--config", conf)
	if err != nil {
		t.Fatalf("restart %s: %v", b.name, err)
	}
	b.proc = p
	t.Cleanup(p.Stop)
}

// recordingRelay forwards one TCP connection at a time to a server and
// keeps what the clients sent, as an eavesdropper on the wire would.
type recordingRelay struct {
	addr string
	mu   sync.Mutex
	sent bytes.Buffer
}

func startRecordingRelay(t *testing.T, target string) *recordingRelay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recordingRelay{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			wg.Go(func() { io.Copy(c, s); c.Close() })
			wg.Go(func() { io.Copy(io.MultiWriter(s, r), c); s.Close() })
		}
	})
	return r
}

func (r *recordingRelay) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent.Write(p)
}

// authRequest is the first kXR_auth the clients sent.
func (r *recordingRelay) authRequest(t *testing.T) *proto.Request {
	t.Helper()
	r.mu.Lock()
	stream := bytes.NewReader(r.sent.Bytes())
	r.mu.Unlock()
	if _, err := stream.Seek(20, io.SeekStart); err != nil { // the hello
		t.Fatal(err)
	}
	for {
		req, err := proto.ReadRequest(stream, 1<<20)
		if err != nil {
			t.Fatalf("no kXR_auth in what the client sent: %v", err)
		}
		if req.ID == proto.ReqAuth {
			return req
		}
	}
}

// replayAuth logs in to addr as a new client and sends the captured
// kXR_auth; nil means the server accepted it.
func replayAuth(addr string, auth *proto.Request) error {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	r := &rootConn{c: c, next: 1}
	var hs [20]byte
	binary.BigEndian.PutUint32(hs[12:], 4)
	binary.BigEndian.PutUint32(hs[16:], 2012)
	if err := r.write(hs[:]); err != nil {
		return err
	}
	if _, _, err := r.recv(); err != nil {
		return err
	}
	var pb, lb [16]byte
	binary.BigEndian.PutUint32(pb[0:], proto.ProtocolVersion)
	copy(lb[4:], "replay")
	for _, q := range []struct {
		id   uint16
		body [16]byte
		data []byte
	}{{proto.ReqProtocol, pb, nil}, {proto.ReqLogin, lb, nil}, {proto.ReqAuth, auth.Body, auth.Data}} {
		st, body, err := r.call(q.id, q.body, q.data)
		if err != nil {
			return err
		}
		if st != proto.StatusOK {
			if st == proto.StatusError {
				return kxrError(body)
			}
			return errors.New("answered status " + strconv.Itoa(int(st)))
		}
	}
	return nil
}
