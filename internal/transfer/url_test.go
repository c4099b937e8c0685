package transfer

import (
	"bytes"
	"context"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/origin"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// Every scheme the cache accepts for an upstream reaches the same file
// from the client commands too: xroot:// is root://, davs:// is https://.
func TestOpenEveryScheme(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	https := httptest.NewTLSServer(webdav.New(webdav.Config{}, o, nil))
	defer https.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := xrdserver.New(xrdserver.Config{}, o, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	}()
	root := ln.Addr().String()
	for _, raw := range []string{
		"root://" + root + "//store/f",
		"xroot://" + root + "//store/f?vo=cms",
		https.URL + "/store/f",
		"davs://" + strings.TrimPrefix(https.URL, "https://") + "/store/f",
	} {
		if !IsRemote(raw) {
			t.Errorf("IsRemote(%q) = false", raw)
		}
		r, err := Open(raw, Options{Insecure: true})
		if err != nil {
			t.Fatalf("open %s: %v", raw, err)
		}
		dest := filepath.Join(t.TempDir(), "f")
		if n, err := Get(context.Background(), r, dest, nil); err != nil || n != 5 {
			t.Errorf("get %s: %d %v", raw, n, err)
		} else if got, _ := os.ReadFile(dest); !bytes.Equal(got, []byte("hello")) {
			t.Errorf("get %s: %q", raw, got)
		}
		r.Close()
	}
	if _, err := Open("ftp://"+root+"/store/f", Options{}); err == nil || !strings.Contains(err.Error(), "unsupported scheme") {
		t.Errorf("ftp:// opened: %v", err)
	}
}
