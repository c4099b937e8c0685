package webdav

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"sitebox/internal/units"
)

// An upload whose body stops arriving is abandoned after BodyTimeout with
// 408 and leaves nothing; one that trickles steadily is taken whole.
func TestPutBodyTimeout(t *testing.T) {
	srv, dir := newServer(t, Config{Settings: Settings{BodyTimeout: units.Duration(300 * time.Millisecond)}})
	put := func(name string, gaps int) (*http.Response, string) {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "PUT /store/%s HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n", name)
		for range gaps {
			time.Sleep(100 * time.Millisecond)
			c.Write([]byte("x"))
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	if resp, body := put("stalled", 3); resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "request body stalled: no data for 300ms") {
		t.Fatalf("stalled upload: status %d %q, want 408 saying why", resp.StatusCode, body)
	}
	if resp, _ := put("steady", 10); resp.StatusCode != http.StatusCreated {
		t.Fatalf("steady upload: status %d, want 201", resp.StatusCode)
	}
	es, _ := os.ReadDir(dir)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "steady" {
		t.Fatalf("left in the export: %v, want only steady", names)
	}
}
