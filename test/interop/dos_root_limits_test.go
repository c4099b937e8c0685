package interop

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/xrootd/proto"
	"sitebox/test/peers"
)

// Five addresses each holding 500 idle logged-in sessions — together the
// session cap of a box allowed 20,000 descriptors (2,500) — lock nobody
// out: each address and network keeps to its share, an idle session is
// closed for a new client (the one idle longest first), and a session
// that holds a file is left alone.
func TestDoSIdleSessions(t *testing.T) {
	requirePeers(t)
	cases := []struct {
		name, config string
		from         func(i int) string
		maxHeld      int // sessions the box may hold for the attackers
	}{
		// One /24: the addresses' shares (an eighth of the cap) and the
		// network's (a quarter) bind.
		{"five addresses", "[root]\nmax_sessions = 2500\n", func(i int) string { return fmt.Sprintf("127.0.0.%d", 2+i) }, 625},
		// Five /24s, each address allowed 500: together they reach the
		// server's cap, and idle sessions are closed to let a client in.
		{"five networks", "[root]\nmax_sessions = 2500\nmax_sessions_per_client = 500\n", func(i int) string { return fmt.Sprintf("127.0.%d.2", 1+i) }, 2500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mp, _ := peers.FreePort()
			b := startBox(t, 1, "--config", dosConfig(t, tc.config), "--metrics-addr", "127.0.0.1:"+strconv.Itoa(mp))
			writeRandom(t, filepath.Join(b.pools[0], "f"), 100)
			busy, err := rootLoginFrom(b.rootHost, "127.0.0.1")
			if err != nil {
				t.Fatal(err)
			}
			defer busy.c.Close()
			h, err := busy.open("/store/f", proto.OpenRead)
			if err != nil {
				t.Fatal(err)
			}
			base := openFDs(t, b.proc)

			conns, refused := idleSessions(b.rootHost, 5, 500, tc.from)
			defer func() {
				for _, r := range conns {
					r.c.Close()
				}
			}()
			held := openFDs(t, b.proc) - base
			t.Logf("5 x 500 idle sessions: %d logged in, the box holds %d; refused: %v", len(conns), held, refused)
			if held > tc.maxHeld+8 {
				t.Errorf("the box holds %d sessions for the attackers, want at most %d", held, tc.maxHeld)
			}

			normalUse(t, b, "5 x 500 idle sessions")
			if r, err := rootLoginFrom(b.rootHost, "127.0.0.1"); err != nil {
				t.Errorf("a new session from 127.0.0.1: %v", err)
			} else {
				r.c.Close()
			}
			st, body, err := busy.call(proto.ReqRead, ioBody(h, 0, 100), nil)
			if err != nil || st != proto.StatusOK || len(body) != 100 {
				t.Errorf("the session holding a file: read %d %d bytes %v", st, len(body), err)
			}
			if log := b.proc.Log.String(); !strings.Contains(log, "limit reached; idle session closed to admit a new one") {
				t.Errorf("no idle session closed, or not logged:\n%s", log)
			}
			fams := scrape(t, "http://127.0.0.1:"+strconv.Itoa(mp)+"/metrics")
			reclaimed := value(fams, "sitebox_root_reclaimed_sessions_total", map[string]string{"listener": "data", "reason": "idle"})
			perNetwork := value(fams, "sitebox_root_limit", map[string]string{"listener": "data", "limit": "sessions_per_network"})
			t.Logf("metrics: %v idle sessions reclaimed, sessions_per_network %v", reclaimed, perNetwork)
			if reclaimed < 1 || perNetwork != 625 {
				t.Errorf("metrics: %v idle sessions reclaimed, sessions_per_network %v; want some and 625", reclaimed, perNetwork)
			}
		})
	}
}

// idleSessions logs in per sessions from each of n addresses (from(i)),
// in parallel, and returns the sessions and the refusals.
func idleSessions(addr string, n, per int, from func(i int) string) ([]*rootConn, map[string]int) {
	var mu sync.Mutex
	var conns []*rootConn
	refused := map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				r, err := rootLoginFrom(addr, from(i))
				mu.Lock()
				if err != nil {
					refused[err.Error()]++
				} else {
					conns = append(conns, r)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return conns, refused
}

// Three addresses opening 4,096 files each — more than the open-file cap
// of a box allowed 20,000 descriptors (10,000) — leave room for a new
// client: no address may hold more than an eighth of the cap.
func TestDoSOpenFilesFewAddresses(t *testing.T) {
	requirePeers(t)
	b := startBox(t, 1, "--config", dosConfig(t, "[root]\nmax_open_files = 10000\n"))
	writeRandom(t, filepath.Join(b.pools[0], "f"), 100)
	opened, refused, conns := holdFiles(t, b.rootHost, []string{"127.0.1.2", "127.0.2.2", "127.0.3.2"}, 4, 1024)
	defer closeAll(conns)
	t.Logf("3 addresses x 4,096 opens: %d opened, refused: %v", opened, refused)
	if !hasPrefixKey(refused, "3024 too many open files from 127.0.1.2 (limit 1250)") {
		t.Errorf("refusals %v do not name the per-address limit", refused)
	}
	normalUse(t, b, "3 addresses x 4,096 opens")
	r, err := rootLoginFrom(b.rootHost, "127.0.4.2")
	if err != nil {
		t.Fatal(err)
	}
	defer r.c.Close()
	if _, err := r.open("/store/f", proto.OpenRead); err != nil {
		t.Errorf("a new client from another network cannot open: %v", err)
	}
}

// Clients that opened files for reading and then stayed silent for longer
// than the idle timeout do not lock out a new client when together they
// hold the server's open-file cap: the one silent longest is disconnected
// (a real client reopens what it was reading when it reconnects). A
// client writing a file is never disconnected so.
func TestDoSDormantFileHolders(t *testing.T) {
	requirePeers(t)
	b := startBox(t, 1, "--config", dosConfig(t, "[root]\nidle_timeout = \"2s\"\nmax_open_files = 3001\nmax_open_files_per_client = 750\n"))
	writeRandom(t, filepath.Join(b.pools[0], "f"), 100)
	writer, err := rootLoginFrom(b.rootHost, "127.0.9.2")
	if err != nil {
		t.Fatal(err)
	}
	defer writer.c.Close()
	wh, err := writer.open("/store/slow-upload", proto.OpenNew)
	if err != nil {
		t.Fatal(err)
	}
	opened, refused, conns := holdFiles(t, b.rootHost, []string{"127.0.1.2", "127.0.2.2", "127.0.3.2", "127.0.4.2"}, 1, 750)
	defer closeAll(conns)
	t.Logf("4 networks x 750 opens: %d opened, refused: %v", opened, refused)
	if opened != 3000 {
		t.Fatalf("%d files held, want the cap's 3000 besides the writer's", opened)
	}
	time.Sleep(3 * time.Second) // all silent past the idle timeout

	normalUse(t, b, "3000 files held by silent clients")
	if !closedBy(conns[0].c, time.Now().Add(time.Second)) {
		t.Error("the holder silent longest was not disconnected")
	}
	if closedBy(conns[len(conns)-1].c, time.Now().Add(time.Second)) {
		t.Error("a holder was disconnected though one sufficed")
	}
	if st, body, err := writer.call(proto.ReqWrite, ioBody(wh, 0, 0), []byte("still here")); err != nil || st != proto.StatusOK {
		t.Fatalf("the silent writer: write %d %v %v", st, err, kxrError(body))
	}
	if st, _, err := writer.call(proto.ReqClose, ioBody(wh, 0, 0), nil); err != nil || st != proto.StatusOK {
		t.Fatalf("the silent writer: close %d %v", st, err)
	}
	sameFile(t, filepath.Join(b.pools[0], "slow-upload"), []byte("still here"))
	if log := b.proc.Log.String(); !strings.Contains(log, "limit reached; silent session closed to free its open files") {
		t.Errorf("no silent session closed, or not logged:\n%s", log)
	}
}

// holdFiles opens /store/f per times in each of sessions sessions from
// each address and keeps them open; it returns the files opened, the
// refusals and the sessions (in the order they opened their files).
func holdFiles(t *testing.T, addr string, ips []string, sessions, per int) (int, map[string]int, []*rootConn) {
	t.Helper()
	opened, refused := 0, map[string]int{}
	var conns []*rootConn
	for _, ip := range ips {
		for range sessions {
			r, err := rootLoginFrom(addr, ip)
			if err != nil {
				closeAll(conns)
				t.Fatal(err)
			}
			conns = append(conns, r)
			n, ref := r.openMany("/store/f", per)
			opened += n
			for msg, k := range ref {
				refused[msg] += k
			}
		}
	}
	return opened, refused, conns
}

func closeAll(conns []*rootConn) {
	for _, r := range conns {
		r.c.Close()
	}
}

// hasPrefixKey reports whether a key of m begins with prefix.
func hasPrefixKey(m map[string]int, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// A real client whose idle connection was closed to make room goes on
// working: XrdCl keeps its connection to a data server for 5 minutes after
// its last use and, finding it closed, connects again on its next request
// (taking the place of another idle session).
func TestDoSReclaimedClientReconnects(t *testing.T) {
	py := python(t)
	b := startBox(t, 1, "--config", dosConfig(t, "[root]\nmax_sessions = 8\nmax_sessions_per_client = 8\nmax_sessions_per_network = 8\n"))
	data := writeRandom(t, filepath.Join(b.pools[0], "f"), 1000)
	script := `
import sys
from XRootD import client
url = sys.argv[1]
fs = client.FileSystem(url)
st, _ = fs.stat('/store/f')
print('first', st.ok, flush=True)
sys.stdin.readline()
st, info = fs.stat('/store/f')
print('second', st.ok, info.size if st.ok else st.message, flush=True)
`
	cmd := exec.Command(py, "-c", script, b.rootURL)
	cmd.Env = append(os.Environ(), "XRD_REQUESTTIMEOUT=20", "XRD_CONNECTIONRETRY=2")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "first True" {
		t.Fatalf("the client's first stat: %q", lines.Text())
	}
	// Seven sessions from elsewhere fill the server's limit; the eighth
	// takes the place of the client's, idle longest.
	var conns []*rootConn
	defer func() { closeAll(conns) }()
	for i := range 8 {
		r, err := rootLoginFrom(b.rootHost, fmt.Sprintf("127.0.%d.2", i+1))
		if err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
		conns = append(conns, r)
	}
	fmt.Fprintln(stdin)
	if !lines.Scan() || lines.Text() != "second True "+strconv.Itoa(len(data)) {
		t.Fatalf("the client's stat after its connection was closed: %q", lines.Text())
	}
	closed := false
	for _, line := range strings.Split(b.proc.Log.String(), "\n") {
		closed = closed || strings.Contains(line, "idle session closed to admit a new one") && strings.Contains(line, " client=127.0.0.1 ")
	}
	if !closed {
		t.Errorf("the client's session was not the one closed:\n%s", b.proc.Log.String())
	}
}
