package webdav

import (
	"context"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io"
	"mime"
	"mime/multipart"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"sitebox/internal/origin"
	"sitebox/internal/store"
)

func testData() []byte { return []byte(strings.Repeat("0123456789", 100)) }

func TestGetRanges(t *testing.T) {
	srv, dir := newServer(t, Config{})
	data := testData()
	writeFile(t, dir, "f", data)
	u := srv.URL + "/store/f"
	for _, tc := range []struct {
		name, rng    string
		status       int
		want         string
		contentRange string
	}{
		{"whole", "", 200, string(data), ""},
		{"single", "bytes=10-19", 206, string(data[10:20]), "bytes 10-19/1000"},
		{"suffix", "bytes=-5", 206, string(data[995:]), "bytes 995-999/1000"},
		{"open", "bytes=998-", 206, string(data[998:]), "bytes 998-999/1000"},
		{"past end clipped", "bytes=990-5000", 206, string(data[990:]), "bytes 990-999/1000"},
		{"unsatisfiable", "bytes=2000-3000", 416, "", "bytes */1000"},
		{"query ignored", "", 200, string(data), ""},
		// RFC 9110 §14.1.1: a suffix of no bytes is unsatisfiable.
		{"empty suffix", "bytes=-0", 416, "", "bytes */1000"},
		{"empty suffix among others", "bytes=-0,5-6", 206, string(data[5:7]), "bytes 5-6/1000"},
		// §14.2: a unit the server does not understand is ignored.
		{"unknown unit", "items=0-5", 200, string(data), ""},
		// Positions past any int64: to the end; from past any end.
		{"huge last", "bytes=0-18446744073709551615", 206, string(data), "bytes 0-999/1000"},
		{"huge suffix", "bytes=-18446744073709551615", 206, string(data), "bytes 0-999/1000"},
		{"huge first", "bytes=18446744073709551615-", 416, "", "bytes */1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := u
			if tc.name == "query ignored" {
				url += "?authz=token&xrd.wantprot=gsi"
			}
			resp, body := do(t, "GET", url, nil, "Range", tc.rng)
			if resp.StatusCode != tc.status || (tc.want != "" && body != tc.want) {
				t.Fatalf("status %d body %.40q; want %d %.40q", resp.StatusCode, body, tc.status, tc.want)
			}
			if got := resp.Header.Get("Content-Range"); got != tc.contentRange {
				t.Fatalf("Content-Range %q, want %q", got, tc.contentRange)
			}
		})
	}
	t.Run("multi", func(t *testing.T) {
		resp, body := do(t, "GET", u, nil, "Range", "bytes=0-1,10-11,-3")
		mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.StatusCode != 206 || mt != "multipart/byteranges" {
			t.Fatalf("status %d type %s", resp.StatusCode, mt)
		}
		mr := multipart.NewReader(strings.NewReader(body), params["boundary"])
		var got []string
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(p)
			got = append(got, p.Header.Get("Content-Range")+"="+string(b))
		}
		want := []string{"bytes 0-1/1000=01", "bytes 10-11/1000=01", "bytes 997-999/1000=789"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("parts %q, want %q", got, want)
		}
	})
}

// A Range on HEAD is ignored (RFC 9110 §14.2: only GET defines range
// handling): 200 with the whole length, as for GET without it.
func TestHeadIgnoresRange(t *testing.T) {
	srv, dir := newServer(t, Config{})
	writeFile(t, dir, "f", testData())
	resp, _ := do(t, "HEAD", srv.URL+"/store/f", nil, "Range", "bytes=0-9")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Length") != "1000" || resp.Header.Get("Content-Range") != "" {
		t.Errorf("HEAD with Range: %d, length %s, Content-Range %q; want 200 with the whole length",
			resp.StatusCode, resp.Header.Get("Content-Length"), resp.Header.Get("Content-Range"))
	}
}

func TestConditionalAndHead(t *testing.T) {
	srv, dir := newServer(t, Config{})
	writeFile(t, dir, "f", testData())
	u := srv.URL + "/store/f"
	resp, body := do(t, "HEAD", u, nil)
	tag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if resp.StatusCode != 200 || body != "" || tag == "" || lm == "" || resp.ContentLength != 1000 {
		t.Fatalf("HEAD: %d len %d etag %q lm %q", resp.StatusCode, resp.ContentLength, tag, lm)
	}
	for _, tc := range []struct {
		name   string
		hdr    []string
		status int
	}{
		{"if-none-match same", []string{"If-None-Match", tag}, 304},
		{"if-none-match other", []string{"If-None-Match", `"x"`}, 200},
		{"if-modified-since", []string{"If-Modified-Since", lm}, 304},
		{"if-match other", []string{"If-Match", `"x"`}, 412},
		{"if-range stale", []string{"Range", "bytes=0-0", "If-Range", `"x"`}, 200},
		{"if-range fresh", []string{"Range", "bytes=0-0", "If-Range", tag}, 206},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if resp, _ := do(t, "GET", u, nil, tc.hdr...); resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	writeFile(t, dir, "f", []byte("changed content"))
	if resp, _ := do(t, "HEAD", u, nil); resp.Header.Get("ETag") == tag {
		t.Fatal("ETag did not change with the file")
	}
}

func TestWantDigest(t *testing.T) {
	srv, dir := newServer(t, Config{})
	data := testData()
	writeFile(t, dir, "f", data)
	ad := fmt.Sprintf("adler32=%08x", adler32.Checksum(data))
	cc := fmt.Sprintf("crc32c=%08x", crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
	for _, tc := range []struct{ want, digest string }{
		{"adler32", ad},
		{"ADLER32", ad},
		{"crc32c", cc},
		{"md5;q=1, crc32c;q=0.3, adler32;q=0.9", ad},
		{"adler32;q=0.2,crc32c", cc},
		{"adler32, crc32c", ad},
		{"crc32c;q=0, adler32;q=0.1", ad},
		{"md5", ""},
		{"sha-256;q=1", ""},
	} {
		for _, method := range []string{"HEAD", "GET"} {
			t.Run(method+" "+tc.want, func(t *testing.T) {
				resp, body := do(t, method, srv.URL+"/store/f", nil, "Want-Digest", tc.want)
				if resp.StatusCode != 200 || resp.Header.Get("Digest") != tc.digest {
					t.Fatalf("%d Digest %q, want %q", resp.StatusCode, resp.Header.Get("Digest"), tc.digest)
				}
				if method == "GET" && body != string(data) {
					t.Fatal("body changed by Want-Digest")
				}
			})
		}
	}
	if resp, _ := do(t, "HEAD", srv.URL+"/store/missing", nil, "Want-Digest", "adler32"); resp.StatusCode != 404 || resp.Header.Get("Digest") != "" {
		t.Fatalf("missing file: %d %q", resp.StatusCode, resp.Header.Get("Digest"))
	}
}

func TestWantDigestParse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "[]"},
		{"adler32", "[adler32]"},
		{" crc32c ; q=0.5 , adler32;q=0.7", "[adler32 crc32c]"},
		{"adler32;q=bogus, crc32c", "[crc32c]"},
		{"adler32;q=2", "[]"},
		{"adler32, adler32;q=0.1", "[adler32]"},
		{"md5,unixcksum", "[md5]"}, // known; the store says whether it offers it
		{"sha1,unixcksum", "[]"},
	} {
		if got := fmt.Sprint(wantDigest(tc.in)); got != tc.want {
			t.Errorf("wantDigest(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestDirectoryListing(t *testing.T) {
	srv, dir := newServer(t, Config{})
	writeFile(t, dir, "d/a b.txt", []byte("x"))
	writeFile(t, dir, "d/sub/x", []byte("x"))
	writeFile(t, dir, "d/"+uploadPrefix+"0123", []byte("partial"))
	resp, body := do(t, "GET", srv.URL+"/store/d", nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{`href="/store/d/a%20b.txt"`, `href="/store/d/sub/"`} {
		if !strings.Contains(body, want) {
			t.Errorf("listing lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, uploadPrefix) {
		t.Error("listing shows an upload in progress")
	}
	if resp, body := do(t, "HEAD", srv.URL+"/store/d", nil); resp.StatusCode != 200 || body != "" {
		t.Fatalf("HEAD dir: %d", resp.StatusCode)
	}
}

// callCounter passes a store's calls on and counts Stat and Open.
type callCounter struct {
	store.Store
	mu           sync.Mutex
	stats, opens int
}

func (c *callCounter) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	c.mu.Lock()
	c.stats++
	c.mu.Unlock()
	return c.Store.Stat(ctx, name)
}

func (c *callCounter) Open(ctx context.Context, name string) (store.File, error) {
	c.mu.Lock()
	c.opens++
	c.mu.Unlock()
	return c.Store.Open(ctx, name)
}

// A GET or HEAD goes through the store once: one Open, whose file
// describes itself; a directory, which Open refuses, is listed.
func TestGetOnePass(t *testing.T) {
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	writeFile(t, dir, "d/f", testData())
	c := &callCounter{Store: o}
	srv := httptest.NewServer(New(Config{}, c, nil))
	defer srv.Close()
	for m, want := range map[string]int{"GET": 206, "HEAD": 200} {
		c.stats, c.opens = 0, 0
		resp, _ := do(t, m, srv.URL+"/store/d/f", nil, "Range", "bytes=0-9")
		if resp.StatusCode != want || resp.Header.Get("ETag") == "" || resp.Header.Get("Last-Modified") == "" {
			t.Errorf("%s: status %d, ETag %q, Last-Modified %q", m, resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("Last-Modified"))
		}
		if c.stats != 0 || c.opens != 1 {
			t.Errorf("%s: %d stats and %d opens, want 0 and 1", m, c.stats, c.opens)
		}
	}
	resp, body := do(t, "GET", srv.URL+"/store/d/", nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `href="/store/d/f"`) {
		t.Errorf("GET of a directory: %d %.200q, want its listing", resp.StatusCode, body)
	}
}
