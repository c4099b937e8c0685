package transfer

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/origin"
	"sitebox/internal/store"
	"sitebox/internal/webdav"
)

// director redirects every file operation to one https endpoint, as a
// sitebox director does for a file it knows the place of.
type director struct {
	store.Store // nil: only the methods below are called
	to          string
}

func (d director) Route(_ context.Context, c store.Call) (store.Route, error) {
	return store.Route{To: []store.Endpoint{{Root: "127.0.0.1:1"}, {HTTPS: d.to}}, Opaque: "sbx.hops=1"}, nil
}

// sitebox put, stat, cksum and get against a director's https URL reach
// the origin it redirects to; the downloaded file is byte-identical.
func TestTransferThroughRedirect(t *testing.T) {
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	b := httptest.NewTLSServer(webdav.New(webdav.Config{}, o, nil))
	defer b.Close()
	a := httptest.NewTLSServer(webdav.New(webdav.Config{}, director{to: b.URL}, nil))
	defer a.Close()

	data := make([]byte, ChunkSize+ChunkSize/2+7) // two parallel chunks
	for i := range data {
		data[i] = byte(i ^ i>>9)
	}
	local := t.TempDir()
	src := filepath.Join(local, "src")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(a.URL+"/store/run/f.root?vo=cms", Options{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	if n, err := Put(ctx, src, r, false, nil); err != nil || n != int64(len(data)) {
		t.Fatalf("put: %d %v", n, err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "run", "f.root")); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("origin copy: %v", err)
	}
	fi, err := r.Store.Stat(ctx, r.Path)
	if err != nil || fi.Size != int64(len(data)) {
		t.Fatalf("stat: %+v %v", fi, err)
	}
	if _, err := store.Checksum(ctx, r.Store, r.Path, "adler32"); err != nil {
		t.Fatalf("cksum: %v", err)
	}
	dest := filepath.Join(local, "dest")
	if n, err := Get(ctx, r, dest, nil); err != nil || n != int64(len(data)) {
		t.Fatalf("get: %d %v", n, err)
	}
	if got, err := os.ReadFile(dest); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("downloaded copy differs: %v", err)
	}
}
