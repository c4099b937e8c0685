package interop

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/xrootd/proto"
	"sitebox/test/peers"
)

// One anonymous session pipelining 4,200 opens of missing files that ask
// for root:// third-party-copy grants, then a flood of such opens of a
// file it may read, neither fills the box's grant table nor keeps a
// legitimate copy from the box: a grant is made only for an open that
// succeeds, and one client may hold only a few at a time.
func TestDoSTPCGrantFlood(t *testing.T) {
	peers.Require(t, "xrdcp")
	a := startBox(t, 1, tpcAllowLoopback...)
	b := startBox(t, 1, tpcAllowLoopback...)
	data := writeRandom(t, filepath.Join(a.pools[0], "src.bin"), 1<<20+3)

	r, err := rootLogin(a.rootHost)
	if err != nil {
		t.Fatal(err)
	}
	defer r.c.Close()
	var missing []string
	for i := range 4200 {
		missing = append(missing, fmt.Sprintf("/pub/missing%d?tpc.key=flood%d&tpc.dst=127.0.0.1", i, i))
	}
	ok, refused := r.openEach(missing)
	t.Logf("4,200 opens of missing files asking for grants: %d opened, refused: %v", ok, summary(refused))
	if ok != 0 {
		t.Errorf("%d opens of missing files succeeded", ok)
	}

	// Opens that succeed hold their grant while the file is open; a
	// client gets a few, then a refusal naming the limit.
	held, err := rootLogin(a.rootHost)
	if err != nil {
		t.Fatal(err)
	}
	defer held.c.Close()
	var readable []string
	for i := range 1000 {
		readable = append(readable, fmt.Sprintf("/pub/readme.txt?tpc.key=held%d&tpc.dst=127.0.0.1", i))
	}
	ok, refused = held.openEach(readable)
	t.Logf("1,000 opens of a readable file asking for grants: %d opened, refused: %v", ok, summary(refused))
	if ok == 0 || ok > 256 {
		t.Errorf("%d grants held by one client", ok)
	}
	if !hasPrefixKey(refused, "3024 open /pub/readme.txt: too many third-party copy grants from 127.0.0.2") {
		t.Errorf("refusals %v do not name the per-client grant limit", refused)
	}

	run(t, false, "xrdcp", "-f", "--tpc", "only", a.rootURL+"//store/src.bin", b.rootURL+"//store/copy.bin")
	sameFile(t, filepath.Join(b.pools[0], "copy.bin"), data)
}

// A root:// TPC grant is used once: the destination's open consumes it,
// and a second open with the same key is refused, on a box as on xrootd.
// A grant never lets the destination write.
func TestTPCGrantSingleUse(t *testing.T) {
	peers.Require(t, "xrootd")
	a := startBox(t, 1, tpcAllowLoopback...)
	writeRandom(t, filepath.Join(a.pools[0], "f"), 1000)
	xdata := t.TempDir()
	os.WriteFile(filepath.Join(xdata, "f"), make([]byte, 1000), 0o644)
	os.Chmod(xdata, 0o777)
	xp, _ := peers.FreePort()
	x, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{
		DataDir: xdata, Port: xp, Name: "tpc-grant-" + strconv.Itoa(xp), WorkDir: t.TempDir(),
		Extra: []string{"ofs.tpc pgm /usr/bin/xrdcp --server"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Stop)

	for _, srv := range []struct {
		name, host, path string
	}{
		{"box", a.rootHost, "/store/f"},
		{"xrootd", "127.0.0.1:" + strconv.Itoa(xp), "/f"},
	} {
		t.Run(srv.name, func(t *testing.T) {
			client, err := rootLoginFrom(srv.host, "127.0.0.1")
			if err != nil {
				t.Fatal(err)
			}
			defer client.c.Close()
			key := "once" + srv.name
			if _, err := client.open(srv.path+"?tpc.key="+key+"&tpc.dst=127.0.0.3", proto.OpenRead); err != nil {
				t.Fatalf("grant: %v", err)
			}
			use := func() error {
				dst, err := rootLoginFrom(srv.host, "127.0.0.3")
				if err != nil {
					return err
				}
				defer dst.c.Close()
				return dst.openDeferred(srv.path + "?tpc.key=" + key + "&tpc.org=attacker.0@[::ffff:127.0.0.1]")
			}
			if err := use(); err != nil {
				t.Fatalf("first use of the grant: %v", err)
			}
			err = use()
			var xe *xrdErr
			if !errors.As(err, &xe) || xe.code != proto.ErrNotAuthorized {
				t.Fatalf("second use of the grant: %v, want refused with 3010", err)
			}
			t.Logf("second use refused: %v", err)
		})
	}
}

// openDeferred opens path for reading and returns the server's refusal,
// waiting for the final answer if the server defers it (kXR_waitresp, then
// kXR_attn with the answer, as xrootd answers a destination that came
// before its grant).
func (r *rootConn) openDeferred(path string) error {
	st, body, err := r.call(proto.ReqOpen, openBody(proto.OpenRead), []byte(path))
	if err != nil || st == proto.StatusOK {
		return err
	}
	if st != proto.StatusWaitResp {
		return kxrError(body)
	}
	r.c.SetReadDeadline(time.Now().Add(time.Minute))
	h, body, err := proto.ReadResponse(r.c, 64<<20)
	if err != nil {
		return err
	}
	if h.Status != proto.StatusAttn || len(body) < 16 {
		return fmt.Errorf("deferred open: status %d", h.Status)
	}
	if st := binary.BigEndian.Uint16(body[10:]); st != proto.StatusError {
		return fmt.Errorf("deferred open: answer status %d", st)
	}
	return kxrError(body[16:])
}

// openEach opens each path for reading, pipelining up to 32 opens, and
// returns how many succeeded and the refusals by "code message".
func (r *rootConn) openEach(paths []string) (int, map[string]int) {
	refused := map[string]int{}
	ok, sent, got := 0, 0, 0
	for got < len(paths) {
		for sent < len(paths) && sent-got < 32 {
			if r.send(proto.ReqOpen, openBody(proto.OpenRead), []byte(paths[sent])) != nil {
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

// summary groups refusals by their code and first words, which name the
// limit or the reason (the path differs from one to the next).
func summary(refused map[string]int) map[string]int {
	out := map[string]int{}
	for msg, n := range refused {
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[:4] + msg[i:]
		}
		if len(msg) > 90 {
			msg = msg[:90]
		}
		out[msg] += n
	}
	return out
}
