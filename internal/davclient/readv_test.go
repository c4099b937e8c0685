package davclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sitebox/internal/store"
)

// rangeOrigin serves one file, data, at /store/f: PROPFIND from a sitebox
// origin, GET from get (nil: the origin's own, which answers multi-range
// requests). It returns the open file and the GETs that reached it.
func rangeOrigin(t *testing.T, data []byte, get func(w http.ResponseWriter, ranges [][2]int64)) (*file, *recorder) {
	t.Helper()
	h, dir := newOrigin(t)
	if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	rc := &recorder{}
	srv := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			rc.mu.Lock()
			rc.reqs = append(rc.reqs, "GET "+r.Header.Get("Range"))
			rc.mu.Unlock()
			if get != nil {
				get(w, parseRanges(t, r.Header.Get("Range")))
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	f, err := client(t, srv.URL, "").Open(context.Background(), "/store/f")
	if err != nil {
		t.Fatal(err)
	}
	return f.(*file), rc
}

func parseRanges(t *testing.T, v string) [][2]int64 {
	var rs [][2]int64
	for _, r := range strings.Split(strings.TrimPrefix(v, "bytes="), ",") {
		a, b, _ := strings.Cut(r, "-")
		first, err1 := strconv.ParseInt(a, 10, 64)
		last, err2 := strconv.ParseInt(b, 10, 64)
		if err1 != nil || err2 != nil {
			t.Errorf("Range %q", v)
		}
		rs = append(rs, [2]int64{first, last})
	}
	return rs
}

func (rc *recorder) gets() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, r := range rc.reqs {
		if strings.HasPrefix(r, "GET ") {
			n++
		}
	}
	return n
}

func randomData(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{1}).Read(b)
	return b
}

// scattered returns n ranges of size bytes at spread-out offsets (not in
// order) of a file of fsize bytes.
func scattered(n, size int, fsize int64) ([][]byte, []int64) {
	bufs, offs := make([][]byte, n), make([]int64, n)
	step := fsize / int64(n)
	for i := range n {
		j := (i * 7) % n
		bufs[i], offs[i] = make([]byte, size), int64(j)*step+int64(j*13)
	}
	return bufs, offs
}

func checkRanges(t *testing.T, data []byte, bufs [][]byte, offs []int64) {
	t.Helper()
	for i, b := range bufs {
		if !bytes.Equal(b, data[offs[i]:offs[i]+int64(len(b))]) {
			t.Fatalf("range %d (%d+%d): wrong bytes", i, offs[i], len(b))
		}
	}
}

// Scattered ranges cost one request per maxRanges, answered by a sitebox
// origin's multipart/byteranges.
func TestReadVOneRequestPerRanges(t *testing.T) {
	data := randomData(4 << 20)
	f, rc := rangeOrigin(t, data, nil)
	for _, c := range []struct{ ranges, gets int }{{16, 1}, {maxRanges, 1}, {150, 3}} {
		before := rc.gets()
		bufs, offs := scattered(c.ranges, 5000, int64(len(data)))
		if err := f.ReadV(context.Background(), bufs, offs); err != nil {
			t.Fatalf("%d ranges: %v", c.ranges, err)
		}
		checkRanges(t, data, bufs, offs)
		if got := rc.gets() - before; got != c.gets {
			t.Errorf("%d ranges took %d GETs, want %d", c.ranges, got, c.gets)
		}
	}
}

// multipart writes the ranges as XrdHttp 5.5 does: an empty line first,
// the fixed boundary "123456", lower-case header names.
func multipart(w http.ResponseWriter, data []byte, ranges [][2]int64, size int64) {
	var b bytes.Buffer
	for _, r := range ranges {
		fmt.Fprintf(&b, "\r\n--123456\r\nContent-type: text/plain; charset=UTF-8\r\nContent-range: bytes %d-%d/%d\r\n\r\n", r[0], r[1], size)
		b.Write(data[r[0] : r[1]+1])
	}
	b.WriteString("\r\n--123456--\r\n")
	w.Header().Set("Content-Type", "multipart/byteranges; boundary=123456")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusPartialContent)
	w.Write(b.Bytes())
}

func single(w http.ResponseWriter, data []byte, first, last, size int64) {
	w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, size))
	w.WriteHeader(http.StatusPartialContent)
	w.Write(data[first : last+1])
}

// Answers a server may give to a multi-range request, and how ReadV takes
// each: the bytes asked, "unsupported" (the caller reads range by range,
// and ReadV asks this server no more), or an error naming the problem.
func TestReadVAnswers(t *testing.T) {
	data := randomData(8 << 20)
	// The boundary XrdHttp uses, inside the bytes asked for: a part's
	// length comes from its Content-Range, not from the boundary.
	copy(data[1<<20+100:], "\r\n--123456--\r\n")
	size := int64(len(data))
	cases := []struct {
		name string
		get  func(w http.ResponseWriter, rs [][2]int64)
		want string // "" (the bytes), "unsupported", or in the error
	}{
		{"XrdHttp's multipart", func(w http.ResponseWriter, rs [][2]int64) { multipart(w, data, rs, size) }, ""},
		{"parts in another order", func(w http.ResponseWriter, rs [][2]int64) {
			multipart(w, data, [][2]int64{rs[2], rs[0], rs[3], rs[1]}, size)
		}, ""},
		{"merged into one part", func(w http.ResponseWriter, rs [][2]int64) { single(w, data, rs[0][0], rs[3][1], size) }, ""},
		{"merged parts overlapping", func(w http.ResponseWriter, rs [][2]int64) {
			multipart(w, data, [][2]int64{{rs[0][0], rs[1][1]}, {rs[1][0] - 10, rs[3][1]}}, size)
		}, ""},
		{"a part per byte", func(w http.ResponseWriter, rs [][2]int64) {
			var one [][2]int64
			for o := rs[0][0]; o <= rs[0][1]; o++ {
				one = append(one, [2]int64{o, o})
			}
			multipart(w, data, append(one, rs[1:]...), size)
		}, "unsupported"},
		{"the whole file", func(w http.ResponseWriter, rs [][2]int64) { w.Write(data) }, "unsupported"},
		{"the first range only", func(w http.ResponseWriter, rs [][2]int64) { single(w, data, rs[0][0], rs[0][1], size) }, "unsupported"},
		{"a part missing", func(w http.ResponseWriter, rs [][2]int64) { multipart(w, data, rs[:3], size) }, "unsupported"},
		{"merged far wider than asked", func(w http.ResponseWriter, rs [][2]int64) { single(w, data, 0, size-1, size) }, "unsupported"},
		{"the file changed size", func(w http.ResponseWriter, rs [][2]int64) { multipart(w, data, rs, size+1) }, "now 8388609 bytes"},
		{"a part past the end", func(w http.ResponseWriter, rs [][2]int64) { single(w, append(data, 0), 0, size, size) }, "past the end"},
		{"cut in a part", func(w http.ResponseWriter, rs [][2]int64) {
			w.Header().Set("Content-Type", "multipart/byteranges; boundary=B")
			w.WriteHeader(http.StatusPartialContent)
			fmt.Fprintf(w, "--B\r\nContent-Range: bytes %d-%d/%d\r\n\r\n", rs[0][0], rs[0][1], size)
			w.Write(data[rs[0][0] : rs[0][0]+10])
		}, "ended early"},
		{"an endless header line", func(w http.ResponseWriter, rs [][2]int64) {
			w.Header().Set("Content-Type", "multipart/byteranges; boundary=B")
			w.WriteHeader(http.StatusPartialContent)
			fmt.Fprintf(w, "--B\r\nX: %s", strings.Repeat("x", 1<<20))
		}, "line over"},
		{"a part without Content-Range", func(w http.ResponseWriter, rs [][2]int64) {
			w.Header().Set("Content-Type", "multipart/byteranges; boundary=B")
			w.WriteHeader(http.StatusPartialContent)
			fmt.Fprintf(w, "--B\r\nContent-Type: text/plain\r\n\r\nxxxx\r\n--B--\r\n")
		}, "without a Content-Range"},
		{"no boundary", func(w http.ResponseWriter, rs [][2]int64) {
			w.Header().Set("Content-Type", "multipart/byteranges")
			w.WriteHeader(http.StatusPartialContent)
		}, "without a boundary"},
		{"garbage where the boundary is due", func(w http.ResponseWriter, rs [][2]int64) {
			w.Header().Set("Content-Type", "multipart/byteranges; boundary=B")
			w.WriteHeader(http.StatusPartialContent)
			fmt.Fprintf(w, "--B\r\nContent-Range: bytes %d-%d/%d\r\n\r\n", rs[0][0], rs[0][1], size)
			w.Write(data[rs[0][0] : rs[0][1]+1])
			fmt.Fprintf(w, "\r\nxx\r\n")
		}, "where the boundary was due"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, rc := rangeOrigin(t, data, c.get)
			bufs := [][]byte{make([]byte, 4096), make([]byte, 1000), make([]byte, 4096), make([]byte, 20000)}
			// Within 1 MiB: a server may merge them into one part.
			offs := []int64{1 << 20, 1<<20 + 100_000, 1<<20 + 300_007, 2<<20 - 20000}
			err := f.ReadV(context.Background(), bufs, offs)
			switch c.want {
			case "":
				if err != nil {
					t.Fatal(err)
				}
				checkRanges(t, data, bufs, offs)
			case "unsupported":
				if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, store.ErrUnsupported) {
					t.Fatalf("got %v, want an ErrUnsupported", err)
				}
				if err := f.ReadV(context.Background(), bufs, offs); !errors.Is(err, errors.ErrUnsupported) || rc.gets() != 1 {
					t.Errorf("asked again: %v after %d GETs, want unsupported without asking", err, rc.gets())
				}
			default:
				if !errors.Is(err, store.ErrIO) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("got %v, want an I/O error saying %q", err, c.want)
				}
			}
		})
	}
}

// ReadV refuses what it cannot ask for: ranges outside the file or
// overlapping.
func TestReadVRefusesBadRanges(t *testing.T) {
	data := randomData(1 << 20)
	f, rc := rangeOrigin(t, data, nil)
	for _, c := range []struct {
		name string
		offs []int64
		want string
	}{
		{"past the end", []int64{0, 1<<20 - 10}, "outside the file"},
		{"negative", []int64{-1, 100}, "outside the file"},
		{"its end wrapping", []int64{0, math.MaxInt64 - 50}, "outside the file"},
		{"overlapping", []int64{0, 50}, "overlap"},
	} {
		err := f.ReadV(context.Background(), [][]byte{make([]byte, 100), make([]byte, 100)}, c.offs)
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want ErrInvalid saying %q", c.name, err, c.want)
		}
	}
	if n := rc.gets(); n != 0 {
		t.Errorf("%d GETs for refused reads", n)
	}
}

// A single-range answer must carry the range asked for.
func TestReadAtChecksContentRange(t *testing.T) {
	data := randomData(1 << 20)
	size := int64(len(data))
	for _, c := range []struct {
		name  string
		first int64 // of the answer's range; its last is 1 MiB - 1
		want  string
	}{
		{"the range asked", 1000, ""},
		{"a wider range", 0, ""},
		{"another range", 1100, "lacks bytes"},
	} {
		f, _ := rangeOrigin(t, data, func(w http.ResponseWriter, rs [][2]int64) { single(w, data, c.first, size-1, size) })
		p := make([]byte, 500)
		n, err := f.ReadAtContext(context.Background(), p, 1000)
		switch {
		case c.want == "" && (err != nil || n != 500 || !bytes.Equal(p, data[1000:1500])):
			t.Errorf("%s: %d bytes, %v", c.name, n, err)
		case c.want != "" && (!errors.Is(err, store.ErrIO) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an I/O error saying %q", c.name, err, c.want)
		}
	}
}

// Offsets a server's claimed size makes possible do not wrap: a read near
// 2^63 asks for the bytes up to that size.
func TestReadAtHugeOffset(t *testing.T) {
	f, rc := rangeOrigin(t, randomData(100), func(w http.ResponseWriter, rs [][2]int64) { w.WriteHeader(http.StatusRequestedRangeNotSatisfiable) })
	f.info.Size = math.MaxInt64 // as a server may claim
	if _, err := f.ReadAtContext(context.Background(), make([]byte, 1<<20), math.MaxInt64-10); err == nil {
		t.Error("read answered 416 succeeded")
	}
	if want := fmt.Sprintf("GET bytes=%d-%d", int64(math.MaxInt64-10), int64(math.MaxInt64-1)); !rc.saw(want) {
		t.Errorf("requests %q, want %q", rc.reqs, want)
	}
	if _, err := f.ReadAtContext(context.Background(), make([]byte, 10), -1); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("negative offset: %v, want ErrInvalid", err)
	}
}

// A read of no bytes sends nothing: "bytes=1000-999" is not a range, and
// io.ReaderAt lets an empty read succeed.
func TestReadAtEmpty(t *testing.T) {
	f, rc := rangeOrigin(t, randomData(100), func(w http.ResponseWriter, rs [][2]int64) { t.Errorf("request for %v", rs) })
	if n, err := f.ReadAtContext(context.Background(), nil, 10); n != 0 || err != nil {
		t.Errorf("empty read: %d, %v", n, err)
	}
	if n := rc.gets(); n != 0 {
		t.Errorf("%d GETs sent", n)
	}
}
