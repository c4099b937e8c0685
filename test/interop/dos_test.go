package interop

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/xrootd/proto"
	"sitebox/test/peers"
)

// requirePeers fails (CI) or skips without the real clients.
func requirePeers(t *testing.T) {
	t.Helper()
	peers.Require(t, "xrdcp")
	peers.Require(t, "curl")
}

// Five sessions opening 4096 files each are refused past the limits with
// an error naming them, and the real clients are served as usual. The
// totals are set as a box allowed enough descriptors has them, whose
// per-client shares are then 512 sessions and 4096 files.
func TestDoSManyOpens(t *testing.T) {
	requirePeers(t)
	b := startBox(t, 1, "--config", dosConfig(t, "[root]\nmax_sessions = 4096\nmax_open_files = 32768\n"))
	writeRandom(t, filepath.Join(b.pools[0], "f"), 100)
	base := openFDs(t, b.proc)

	var mu sync.Mutex
	opened, refusals := 0, map[string]int{}
	var conns []*rootConn
	var wg sync.WaitGroup
	for i := range 5 {
		r, err := rootLogin(b.rootHost)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, r)
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, refused := r.openMany("/store/f", 4096)
			mu.Lock()
			defer mu.Unlock()
			opened += n
			for msg, k := range refused {
				refusals[msg] += k
			}
		}()
		if i == 0 {
			wg.Wait() // the first alone meets its session's limit; the others the address's
		}
	}
	wg.Wait()
	t.Logf("5 sessions x 4096 opens: %d opened, refused: %v", opened, refusals)
	if opened > 4096 {
		t.Errorf("%d files opened from one address, limit 4096", opened)
	}
	seen := func(want string) bool {
		for msg := range refusals {
			if strings.HasPrefix(msg, want) {
				return true
			}
		}
		return false
	}
	if !seen("3008 too many open files in this session (limit 1024)") || !seen("3024 too many open files from 127.0.0.2 (limit 4096)") {
		t.Errorf("refusals %v lack the per-session (kXR_NoMemory) and per-client (kXR_Overloaded) limits", refusals)
	}
	if held := openFDs(t, b.proc) - base; held > 4096+5+16 {
		t.Errorf("the box holds %d more descriptors under attack", held)
	}

	// More sessions from the address than allowed are refused at login:
	// those it holds are busy or just set up (reclaim_test.go in the
	// server's package shows idle ones making room).
	var sessErr error
	for i := 0; i < 600 && sessErr == nil; i++ {
		var r *rootConn
		if r, sessErr = rootLogin(b.rootHost); sessErr == nil {
			conns = append(conns, r)
		}
	}
	var xe *xrdErr
	if !errors.As(sessErr, &xe) || xe.code != proto.ErrOverloaded || !strings.Contains(xe.msg, "too many sessions from 127.0.0.2 (limit 512)") {
		t.Errorf("session past the per-client limit: %v, want kXR_Overloaded naming the limit", sessErr)
	} else {
		t.Logf("session %d refused: %v", len(conns)+1, sessErr)
	}

	normalUse(t, b, "5x4096 opens and 512 sessions from one address")
	for _, r := range conns {
		r.c.Close()
	}
	waitFDs(t, b.proc, base+8, 30*time.Second, "after the attackers left")

	// Thousands of refusals, one log line per kind of refusal.
	b.proc.Stop()
	if n := strings.Count(b.proc.Log.String(), "limit reached; refusing"); n != 3 {
		t.Errorf("%d refusals logged, want 3 (one per limit met):\n%s", n, b.proc.Log.String())
	}
}

// xrdcp over the session limit, whose places are held by sessions with a
// file open, fails at once with the limit named.
func TestDoSSessionLimitXrdcp(t *testing.T) {
	peers.Require(t, "xrdcp")
	b := startBox(t, 1, "--config", dosConfig(t, "[root]\nmax_sessions_per_client = 2\n"))
	writeRandom(t, filepath.Join(b.pools[0], "f"), 100)
	// Two admitted sessions from 127.0.0.1, as xrdcp. The box's readiness
	// probe at start may hold a place until the box sees it closed, so a
	// session refused meanwhile is opened again.
	deadline := time.Now().Add(promptly)
	for held := 0; held < 2; {
		r, err := rootLoginFrom(b.rootHost, "127.0.0.1")
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("session %d from 127.0.0.1 not admitted: %v", held+1, err)
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		defer r.c.Close()
		if _, err := r.open("/store/f", proto.OpenRead); err != nil {
			t.Fatal(err)
		}
		held++
	}
	start := time.Now()
	out, err := run(t, true, "xrdcp", "-f", b.rootURL+"//store/f", filepath.Join(t.TempDir(), "f"))
	if err == nil || !strings.Contains(out, "[3024] too many sessions from 127.0.0.1 (limit 2)") {
		t.Fatalf("xrdcp over the session limit: %v: %s", err, out)
	}
	t.Logf("xrdcp refused in %v: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))
}

// openMany opens path n times, pipelining up to 32 opens, and returns how
// many succeeded and the refusals by "code message".
func (r *rootConn) openMany(path string, n int) (int, map[string]int) {
	refused := map[string]int{}
	ok, sent, got := 0, 0, 0
	for got < n {
		for sent < n && sent-got < 32 {
			if r.send(proto.ReqOpen, openBody(proto.OpenRead), []byte(path)) != nil {
				return ok, refused
			}
			sent++
		}
		h, body, err := r.recv()
		if err != nil {
			refused[err.Error()]++
			return ok, refused
		}
		got++
		if h.Status == proto.StatusOK {
			ok++
		} else if xe := new(xrdErr); errors.As(kxrError(body), &xe) {
			refused[fmt.Sprintf("%d %s", xe.code, xe.msg)]++
		}
	}
	return ok, refused
}

// attackConfig shortens the cut-off times so the tests can watch the
// attackers being disconnected; the buffers' fairness, not these
// timeouts, keeps the real clients prompt meanwhile.
const attackConfig = `
[root]
request_timeout = "10s"
write_timeout = "10s"

[https]
body_timeout = "10s"
`

// Sixteen sessions that start a 64 MiB pgread and never read the answer
// hold only their own buffers: xrdcp (pgread by default) and curl are
// served promptly, and the stalled clients are disconnected after the
// write timeout.
func TestDoSStalledPgreads(t *testing.T) {
	requirePeers(t)
	b := startBox(t, 1, "--config", dosConfig(t, attackConfig))
	writeRandom(t, filepath.Join(b.pools[0], "big.bin"), 64<<20)
	base := openFDs(t, b.proc)
	for range 16 {
		r, err := rootLogin(b.rootHost)
		if err != nil {
			t.Fatal(err)
		}
		defer r.c.Close()
		h, err := r.open("/store/big.bin", proto.OpenRead)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.send(proto.ReqPgread, ioBody(h, 0, 64<<20), nil); err != nil {
			t.Fatal(err)
		}
		// The answer has started: the server is sending into a socket
		// nobody reads.
		if _, err := readN(r.c, proto.ResponseHeaderLen); err != nil {
			t.Fatal(err)
		}
	}
	normalUse(t, b, "16 stalled pgreads")
	took := waitFDs(t, b.proc, base+2, 60*time.Second, "stalled readers")
	t.Logf("stalled readers disconnected %v after the real clients finished", took.Round(time.Second))
}

func readN(c net.Conn, n int) ([]byte, error) {
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	b := make([]byte, n)
	_, err := readFullConn(c, b)
	return b, err
}

func readFullConn(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Sixteen sessions that send a kXR_write header and go silent hold no
// buffer: real writes and reads are served promptly, and the silent
// clients are disconnected after the request timeout.
func TestDoSSilentWrites(t *testing.T) {
	requirePeers(t)
	b := startBox(t, 1, "--config", dosConfig(t, attackConfig))
	var conns []*rootConn
	for i := range 16 {
		r, err := rootLogin(b.rootHost)
		if err != nil {
			t.Fatal(err)
		}
		defer r.c.Close()
		h, err := r.open(fmt.Sprintf("/store/silent/%d", i), proto.OpenNew|proto.OpenMkpath)
		if err != nil {
			t.Fatal(err)
		}
		hdr := proto.EncodeRequest(proto.StreamID{0, 99}, proto.ReqWrite, ioBody(h, 0, 0), nil)
		hdr[20], hdr[21] = 0, 0x80 // 8 MiB of payload announced, none sent
		if err := r.write(hdr); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, r)
	}
	normalUse(t, b, "16 silent writes")
	start := time.Now()
	for i, r := range conns {
		if !closedBy(r.c, start.Add(45*time.Second)) {
			t.Fatalf("silent writer %d still connected after %v", i, time.Since(start))
		}
	}
	t.Logf("silent writers disconnected %v after the real clients finished", time.Since(start).Round(time.Second))
}

// Three hundred uploads trickling their bodies cost little memory and
// hold nobody back; once they stall they are answered 408 after the body
// timeout and leave no file.
func TestDoSSlowPuts(t *testing.T) {
	requirePeers(t)
	b := startBox(t, 1, "--config", dosConfig(t, attackConfig))
	rss0, _ := b.proc.RSS()
	addr := strings.TrimPrefix(b.httpsURL, "https://")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	results := make(chan string, 300)
	for i := range 300 {
		c, err := tls.DialWithDialer(&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(attackerIP)}, Timeout: 20 * time.Second},
			"tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatalf("slow PUT %d: %v", i, err)
		}
		defer c.Close()
		fmt.Fprintf(c, "PUT /store/slow/%d HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\n\r\n", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- trickle(c, stop)
		}()
	}
	// Every upload has reached the handler once its temporary file exists.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		es, _ := os.ReadDir(filepath.Join(b.pools[0], "slow"))
		if len(es) == 300 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of 300 uploads started", len(es))
		}
	}
	rss1, _ := b.proc.RSS()
	t.Logf("300 slow PUTs: box RSS %d MiB -> %d MiB", rss0>>20, rss1>>20)
	if rss1-rss0 > 150<<20 {
		t.Errorf("300 slow PUTs cost %d MiB", (rss1-rss0)>>20)
	}
	normalUse(t, b, "300 slow PUTs")
	close(stop) // the trickles stop: the uploads stall
	start := time.Now()
	wg.Wait()
	close(results)
	answers := map[string]int{}
	for r := range results {
		answers[r]++
	}
	t.Logf("stalled uploads answered within %v: %v", time.Since(start).Round(time.Second), answers)
	if answers["408"] != 300 {
		t.Errorf("stalled uploads got %v, want 300 times 408", answers)
	}
	if es, _ := os.ReadDir(filepath.Join(b.pools[0], "slow")); len(es) > 0 {
		t.Errorf("stalled uploads left %d files", len(es))
	}
}

// trickle sends a byte a second until stop, then waits for the answer.
func trickle(c net.Conn, stop chan struct{}) string {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.Write([]byte("x")); err != nil {
				return "write: " + err.Error()
			}
			continue
		case <-stop:
		}
		break
	}
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "read: " + err.Error()
	}
	resp.Body.Close()
	return fmt.Sprint(resp.StatusCode)
}
