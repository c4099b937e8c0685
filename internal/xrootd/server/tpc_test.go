package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

func TestTPCGrants(t *testing.T) {
	later := time.Now().Add(time.Minute)
	grant := func(addr string) *tpcGrant { return &tpcGrant{path: "/f", addr: addr, expires: later} }
	t.Run("used once", func(t *testing.T) {
		var g tpcGrants
		gr := grant("192.0.2.1")
		if err := g.add("k", gr); err != nil {
			t.Fatal(err)
		}
		if err := g.add("k", grant("192.0.2.1")); err == nil {
			t.Error("a second grant under a key in use was made")
		}
		if got := g.lookup("k"); got != gr {
			t.Fatalf("lookup: %v", got)
		}
		if !g.take("k", gr) {
			t.Fatal("the grant could not be taken")
		}
		if g.take("k", gr) || g.lookup("k") != nil {
			t.Error("a grant was taken twice")
		}
		if g.count() != 0 || len(g.byAddress) != 0 || len(g.byNetwork) != 0 {
			t.Errorf("a used grant is still counted: %d %v %v", g.count(), g.byAddress, g.byNetwork)
		}
	})
	t.Run("withdrawn and expired", func(t *testing.T) {
		var g tpcGrants
		gr := grant("192.0.2.1")
		g.add("k", gr)
		g.withdraw("k", gr)
		if g.lookup("k") != nil {
			t.Error("a withdrawn grant was found")
		}
		old := &tpcGrant{path: "/o", addr: "192.0.2.1", expires: time.Now().Add(-time.Second)}
		g.add("old", old)
		if g.lookup("old") != nil || g.take("old", old) {
			t.Error("an expired grant was found")
		}
		g.add("old2", &tpcGrant{path: "/o", addr: "192.0.2.1", expires: time.Now().Add(-time.Second)})
		g.swept = time.Time{}
		g.add("new", grant("192.0.2.1"))
		if g.count() != 1 || g.byAddress["192.0.2.1"] != 1 {
			t.Errorf("expired grants not swept: %d grants, %v", g.count(), g.byAddress)
		}
	})
	t.Run("limits", func(t *testing.T) {
		var g tpcGrants
		n := 0
		add := func(addr string) error {
			n++
			return g.add("k"+strconv.Itoa(n), grant(addr))
		}
		for i := range maxTPCGrantsPerClient {
			if err := add("192.0.2.1"); err != nil {
				t.Fatalf("grant %d refused: %v", i, err)
			}
		}
		if err := add("192.0.2.1"); err == nil || !strings.Contains(err.Error(), "too many third-party copy grants from 192.0.2.1 (limit 64)") {
			t.Fatalf("grant past the per-client limit: %v", err)
		}
		for i := 2; n < maxTPCGrantsPerNetwork+1; i++ { // the address's refusal counted nothing
			for range maxTPCGrantsPerClient {
				if n < maxTPCGrantsPerNetwork+1 {
					if err := add("192.0.2." + strconv.Itoa(i)); err != nil {
						t.Fatalf("grant %d refused: %v", n, err)
					}
				}
			}
		}
		if err := add("192.0.2.200"); err == nil || !strings.Contains(err.Error(), "from network 192.0.2.0/24 (limit 256)") {
			t.Fatalf("grant past the per-network limit: %v", err)
		}
		for i := 0; g.count() < maxTPCGrants; i++ {
			if err := add("2001:db8:" + strconv.Itoa(i/maxTPCGrantsPerClient) + "::1"); err != nil {
				t.Fatalf("grant %d refused: %v", g.count(), err)
			}
		}
		if err := add("2001:db8:ffff::1"); err == nil || !strings.Contains(err.Error(), "on this server (limit 4096)") {
			t.Fatalf("grant past the table's limit: %v", err)
		}
	})
}

func TestTPCCGI(t *testing.T) {
	tests := []struct {
		name, cgi string
		tpc       bool
	}{
		{"none", "", false},
		{"authz only", "authz=Bearer%20x", false},
		{"placement without key", "tpc.stage=placement", false},
		{"destination", "tpc.key=k&tpc.src=h:1094&tpc.lfn=/f&tpc.stage=copy", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tpcCGI(tc.cgi) != nil; got != tc.tpc {
				t.Errorf("tpcCGI(%q) != nil is %v, want %v", tc.cgi, got, tc.tpc)
			}
		})
	}
}

func TestCGISafe(t *testing.T) {
	if got := cgiSafe("root.12@[::ffff:1.2.3.4]&x=y?z"); got != "root.12@[::ffff:1.2.3.4]xyz" {
		t.Errorf("cgiSafe: %q", got)
	}
}

// refusingStore refuses to open /secret, as the auth guard refuses a
// client a file it may not read.
type refusingStore struct{ store.Store }

func (s refusingStore) Open(ctx context.Context, name string) (store.File, error) {
	if name == "/secret" {
		return nil, fmt.Errorf("open %s: %w", name, store.ErrPermission)
	}
	return s.Store.Open(ctx, name)
}

// A third-party copy grant is made only by an open that succeeds, lasts
// as long as the client keeps the file open, is used once, and only for
// reading.
func TestTPCGrantOpens(t *testing.T) {
	st, dir := newOriginStore(t, false)
	writeTestFile(t, filepath.Join(dir, "f"), []byte("data"))
	writeTestFile(t, filepath.Join(dir, "secret"), []byte("secret"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{}, refusingStore{st}, nil)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	addr := ln.Addr().String()
	client := login(t, addr) // as tester.0
	open := func(r *rawConn, path string, opts uint16) (uint16, []byte) {
		var b [16]byte
		binary.BigEndian.PutUint16(b[2:], opts)
		return r.call(proto.ReqOpen, b, []byte(path))
	}
	for _, path := range []string{"/missing", "/secret", "/"} {
		if st, _ := open(client, path+"?tpc.key=k&tpc.dst=127.0.0.3", proto.OpenRead); st == proto.StatusOK {
			t.Fatalf("open of %s succeeded", path)
		}
		if n := srv.tpc.count(); n != 0 {
			t.Fatalf("an open of %s that failed made %d grants", path, n)
		}
	}
	st2, _ := open(client, "/f?tpc.key=w&tpc.dst=127.0.0.3", proto.OpenUpdate)
	if st2 == proto.StatusOK || srv.tpc.count() != 0 {
		t.Fatal("an open for writing made a grant")
	}

	h := client.open("/f?tpc.key=k1&tpc.dst=127.0.0.3", proto.OpenRead)
	if srv.tpc.count() != 1 {
		t.Fatal("no grant made by an open that succeeded")
	}
	if st, _ := client.call(proto.ReqClose, handleBody(h), nil); st != proto.StatusOK || srv.tpc.count() != 0 {
		t.Fatalf("closing the granted file: status %d, %d grants left", st, srv.tpc.count())
	}

	client.open("/f?tpc.key=k2&tpc.dst=127.0.0.3", proto.OpenRead)
	dst := loginFrom(t, addr, "127.0.0.3")
	st3, body := open(dst, "/f?tpc.key=k2&tpc.org=tester.0@127.0.0.1", proto.OpenUpdate)
	if code, msg := errOf(body); st3 != proto.StatusError || code != proto.ErrNotAuthorized || !strings.Contains(msg, "for reading only") {
		t.Fatalf("a destination opening for writing: status %d %d %q", st3, code, msg)
	}
	dh := dst.open("/f?tpc.key=k2&tpc.org=tester.0@127.0.0.1", proto.OpenRead)
	if st, body := dst.call(proto.ReqRead, readBody(dh, 0, 4), nil); st != proto.StatusOK || string(body) != "data" {
		t.Fatalf("the destination's read: %d %q", st, body)
	}
	if n := srv.tpc.count(); n != 0 {
		t.Fatalf("the grant was not used up: %d left", n)
	}
}
