package interop

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/xrootd/proto"
	"sitebox/test/peers"
)

// attackerIP is the address hostile clients connect from; the real
// clients (xrdcp, curl) use 127.0.0.1, so per-address limits tell them
// apart as they would tell a remote attacker from a site's users.
const attackerIP = "127.0.0.2"

// dialFrom connects to addr from ip.
func dialFrom(addr, ip string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return d.Dial("tcp", addr)
}

// rootConn is a raw root:// client speaking frames directly, as an
// attacker would.
type rootConn struct {
	c    net.Conn
	next uint16
}

// rootLogin connects from attackerIP and does hello, kXR_protocol,
// kXR_login and a ping; a refused session (refused at its first request
// after login) comes back as its kXR error.
func rootLogin(addr string) (*rootConn, error) { return rootLoginFrom(addr, attackerIP) }

// rootLoginFrom is rootLogin from the address ip.
func rootLoginFrom(addr, ip string) (*rootConn, error) {
	c, err := dialFrom(addr, ip)
	if err != nil {
		return nil, err
	}
	r := &rootConn{c: c, next: 1}
	var hs [20]byte
	binary.BigEndian.PutUint32(hs[12:], 4)
	binary.BigEndian.PutUint32(hs[16:], 2012)
	if err := r.write(hs[:]); err != nil {
		c.Close()
		return nil, err
	}
	if _, _, err := r.recv(); err != nil {
		c.Close()
		return nil, err
	}
	var pb [16]byte
	binary.BigEndian.PutUint32(pb[0:], proto.ProtocolVersion)
	var lb [16]byte
	copy(lb[4:], "attacker")
	for _, q := range []struct {
		id   uint16
		body [16]byte
	}{{proto.ReqProtocol, pb}, {proto.ReqLogin, lb}, {proto.ReqPing, [16]byte{}}} {
		if st, body, err := r.call(q.id, q.body, nil); err != nil || st != proto.StatusOK {
			c.Close()
			if err == nil {
				err = kxrError(body)
			}
			return nil, err
		}
	}
	return r, nil
}

// xrdErr is a kXR_error answer.
type xrdErr struct {
	code int32
	msg  string
}

func (e *xrdErr) Error() string { return "kXR error " + strconv.Itoa(int(e.code)) + ": " + e.msg }

func kxrError(body []byte) error {
	if len(body) < 4 {
		return errors.New("malformed kXR_error")
	}
	return &xrdErr{int32(binary.BigEndian.Uint32(body)), strings.TrimRight(string(body[4:]), "\x00")}
}

func (r *rootConn) write(b []byte) error {
	r.c.SetWriteDeadline(time.Now().Add(20 * time.Second))
	_, err := r.c.Write(b)
	return err
}

func (r *rootConn) send(id uint16, body [16]byte, data []byte) error {
	var sid proto.StreamID
	binary.BigEndian.PutUint16(sid[:], r.next)
	r.next++
	return r.write(proto.EncodeRequest(sid, id, body, data))
}

func (r *rootConn) recv() (proto.ResponseHeader, []byte, error) {
	r.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	return proto.ReadResponse(r.c, 64<<20)
}

func (r *rootConn) call(id uint16, body [16]byte, data []byte) (uint16, []byte, error) {
	if err := r.send(id, body, data); err != nil {
		return 0, nil, err
	}
	h, b, err := r.recv()
	return h.Status, b, err
}

func openBody(opts uint16) [16]byte {
	var b [16]byte
	binary.BigEndian.PutUint16(b[0:], 0o644)
	binary.BigEndian.PutUint16(b[2:], opts)
	return b
}

// open opens path and returns its handle or the server's refusal.
func (r *rootConn) open(path string, opts uint16) ([4]byte, error) {
	var h [4]byte
	st, body, err := r.call(proto.ReqOpen, openBody(opts), []byte(path))
	if err != nil {
		return h, err
	}
	if st != proto.StatusOK {
		return h, kxrError(body)
	}
	copy(h[:], body)
	return h, nil
}

// ioBody is the body of a read, pgread or write request.
func ioBody(h [4]byte, off int64, n int32) [16]byte {
	var b [16]byte
	copy(b[:4], h[:])
	binary.BigEndian.PutUint64(b[4:], uint64(off))
	binary.BigEndian.PutUint32(b[12:], uint32(n))
	return b
}

// closed reports whether the server has closed c, reading at most until
// deadline (which drains what the server had sent).
func closedBy(c net.Conn, deadline time.Time) bool {
	c.SetReadDeadline(deadline)
	buf := make([]byte, 64<<10)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
}

// openFDs counts the descriptors the box process holds.
func openFDs(t *testing.T, p *peers.Process) int {
	t.Helper()
	es, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(p.Cmd.Process.Pid), "fd"))
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// waitFDs waits until the box holds at most n descriptors.
func waitFDs(t *testing.T, p *peers.Process, n int, within time.Duration, what string) time.Duration {
	t.Helper()
	start := time.Now()
	for openFDs(t, p) > n {
		if time.Since(start) > within {
			t.Fatalf("%s: the box still holds %d descriptors after %v, want at most %d", what, openFDs(t, p), within, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

// dosConfig writes a config with the given TOML and returns its path.
// Its export only makes the file valid: startBox's flags replace it.
func dosConfig(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "site.toml")
	text += "\n[[export]]\nprefix = \"/placeholder\"\npools = [\"" + dir + "\"]\n"
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// promptly is how long a real client's transfer may take while the box
// is under attack.
const promptly = 5 * time.Second

// normalUse runs the real clients — xrdcp read and write (pgread and
// pgwrite, xrdcp's defaults), curl GET and PUT — against b and fails the
// test if any fails or takes longer than promptly. It reports the times.
func normalUse(t *testing.T, b *box, during string) {
	t.Helper()
	dir := t.TempDir()
	data := writeRandom(t, filepath.Join(b.pools[0], "normal.bin"), 16<<20)
	curl := []string{"-sS", "--fail-with-body", "--max-time", "60", "--cacert", b.certFile}
	steps := []struct {
		what string
		name string
		args []string
		got  string // file that must then hold data
	}{
		{"xrdcp read", "xrdcp", []string{"-f", b.rootURL + "//store/normal.bin", dir + "/down"}, dir + "/down"},
		{"xrdcp write", "xrdcp", []string{"-f", dir + "/down", b.rootURL + "//store/normal-up.bin"}, filepath.Join(b.pools[0], "normal-up.bin")},
		{"curl GET", "curl", append(curl, "-o", dir+"/get", b.httpsURL+"/store/normal.bin"), dir + "/get"},
		{"curl PUT", "curl", append(curl, "-T", dir+"/get", b.httpsURL+"/store/normal-put.bin"), filepath.Join(b.pools[0], "normal-put.bin")},
	}
	var report []string
	for _, s := range steps {
		start := time.Now()
		run(t, false, s.name, s.args...)
		took := time.Since(start)
		sameFile(t, s.got, data)
		report = append(report, s.what+" "+took.Round(time.Millisecond).String())
		if took > promptly {
			t.Errorf("%s during %s took %v (want under %v)", s.what, during, took, promptly)
		}
	}
	t.Logf("during %s: %s", during, strings.Join(report, ", "))
}
