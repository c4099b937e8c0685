package interop

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/davclient"
)

// scatteredReads reads random 32 KiB chunks of a file through root://
// vector reads and checks each against the file's bytes.
const scatteredReads = `
import random, sys
from XRootD import client
url, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
rnd = random.Random(7)
f = client.File()
st, _ = f.open(url)
assert st.ok, st.message
for _ in range(20):
    chunks = [(o * 32768 + rnd.randrange(100), 32768) for o in sorted(rnd.sample(range(len(data) // 32768 - 1), 16))]
    st, res = f.vector_read(chunks=chunks)
    assert st.ok, st.message
    for c in res.chunks:
        assert c.buffer == data[c.offset:c.offset + c.length], c.offset
f.close()
print("ok")
`

// TestCacheXrdHTTPUpstream: XrdHttp 5.5 answers the multi-range GETs a
// cache sends for scattered misses over https:// (its multipart has a
// fixed boundary, "123456", and lower-case part headers), and vector
// reads through a cache whose upstream it is get the file's bytes.
func TestCacheXrdHTTPUpstream(t *testing.T) {
	py := python(t)
	b := startBox(t, 1)
	x := startXrdHTTP(t, b.certFile, filepath.Join(filepath.Dir(b.certFile), "key.pem"))
	data := writeRandom(t, filepath.Join(x.data, "f.root"), 16<<20)
	// The boundary inside bytes a range asks for: parts are read by the
	// length their Content-Range gives.
	copy(data[5<<20+100:], "\r\n--123456--\r\n")
	if err := os.WriteFile(filepath.Join(x.data, "f.root"), data, 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("multi-range", func(t *testing.T) {
		dav, err := davclient.New(x.url, davclient.Options{CAFile: b.certFile})
		if err != nil {
			t.Fatal(err)
		}
		f, err := dav.Open(context.Background(), "/f.root")
		if err != nil {
			t.Fatal(err)
		}
		rv, ok := f.(interface {
			ReadV(ctx context.Context, bufs [][]byte, offs []int64) error
		})
		if !ok {
			t.Fatal("https:// files read no scattered ranges at once")
		}
		for _, n := range []int{2, 16, 200} { // 200: several requests
			bufs, offs := make([][]byte, n), make([]int64, n)
			for i := range n {
				bufs[i], offs[i] = make([]byte, 20000), int64(i)*(int64(len(data))/int64(n))+int64(i%7)
			}
			offs[(5<<20)/(len(data)/n)] = 5 << 20 // the range nearest the boundary moves onto it
			if err := rv.ReadV(context.Background(), bufs, offs); err != nil {
				t.Fatalf("%d ranges: %v (unsupported: %v)", n, err, errors.Is(err, errors.ErrUnsupported))
			}
			for i := range n {
				if !bytes.Equal(bufs[i], data[offs[i]:offs[i]+20000]) {
					t.Fatalf("%d ranges: range at %d: wrong bytes", n, offs[i])
				}
			}
		}
	})

	t.Run("through a cache", func(t *testing.T) {
		c := startCache(t, cacheConf{dir: t.TempDir(), routes: []cacheRoute{{"/", []string{x.url}}},
			extra: []string{`upstream_ca = "` + b.certFile + `"`}})
		for pass := range 2 { // cold, then from the cache
			out, _ := run(t, false, py, "-c", scatteredReads, c.rootURL+"//f.root", filepath.Join(x.data, "f.root"))
			if !strings.Contains(out, "ok") {
				t.Fatalf("pass %d: %s", pass, out)
			}
		}
	})
}
