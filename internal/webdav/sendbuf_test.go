package webdav

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"sitebox/internal/origin"
)

// TestGetOverTLS: a GET over TLS, copied through the handler's own
// buffers, gives the file's bytes exactly, whole and in ranges that
// start and end inside a buffer.
func TestGetOverTLS(t *testing.T) {
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	srv := httptest.NewTLSServer(New(Config{}, o, nil))
	defer srv.Close()
	data := make([]byte, 3*sendPiece+12345)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	writeFile(t, dir, "f", data)
	client := srv.Client()
	for _, tc := range []struct{ from, to int }{
		{0, len(data) - 1},
		{1, sendPiece},
		{sendPiece - 7, 2*sendPiece + 9},
		{len(data) - 3, len(data) - 1},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/store/f", nil)
		if tc.from > 0 || tc.to < len(data)-1 {
			req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", tc.from, tc.to))
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(got, data[tc.from:tc.to+1]) {
			t.Fatalf("bytes %d-%d: %v, %d bytes (status %d), equal %v", tc.from, tc.to, err, len(got), resp.StatusCode, bytes.Equal(got, data[tc.from:tc.to+1]))
		}
	}
}
