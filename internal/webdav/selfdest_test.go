package webdav

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A MOVE or COPY whose Destination names this server by another name
// than the request's (localhost for 127.0.0.1) is a move or copy here,
// not a 502 or a third-party push to itself.
func TestDestinationNamingThisServerOtherwise(t *testing.T) {
	var port string
	self := func(hostport string) bool {
		h, p, _ := net.SplitHostPort(hostport)
		return (h == "localhost" || h == "127.0.0.1") && p == port
	}
	srv, dir := newServer(t, Config{Self: self})
	_, port, _ = net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	writeFile(t, dir, "a", []byte("data"))
	other := "http://localhost:" + port
	if resp, body := do(t, "COPY", srv.URL+"/store/a", nil, "Destination", other+"/store/b"); resp.StatusCode != 201 {
		t.Fatalf("COPY to this server by another name: %d %s", resp.StatusCode, body)
	}
	if resp, body := do(t, "MOVE", srv.URL+"/store/b", nil, "Destination", other+"/store/c"); resp.StatusCode != 201 {
		t.Fatalf("MOVE to this server by another name: %d %s", resp.StatusCode, body)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "c")); err != nil || string(b) != "data" {
		t.Errorf("after COPY and MOVE: %q %v", b, err)
	}
	// Another server is still another server.
	if resp, _ := do(t, "MOVE", srv.URL+"/store/a", nil, "Destination", "http://elsewhere.example:"+port+"/store/d"); resp.StatusCode != 502 {
		t.Errorf("MOVE to another server: %d, want 502", resp.StatusCode)
	}
}
