package interop

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/test/peers"
)

// trickleSource is an http:// WebDAV source of one file of size bytes
// that answers every range at once but for its last byte, which it holds
// until the request ends: each of the box's streams then holds a nearly
// full buffer for as long as the source likes.
func trickleSource(t *testing.T, size int) string {
	return fakeSource(t, size, func(w http.ResponseWriter, r *http.Request) {
		start, end := 0, size-1
		if rg := r.Header.Get("Range"); rg != "" {
			fmt.Sscanf(rg, "bytes=%d-%d", &start, &end)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, size))
			w.Header().Set("Content-Length", strconv.Itoa(end-start+1))
			w.WriteHeader(http.StatusPartialContent)
		}
		w.Write(make([]byte, end-start))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
}

// rssBytes is the box's resident memory.
func rssBytes(t *testing.T, p *peers.Process) int64 {
	t.Helper()
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(p.Cmd.Process.Pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestHTTPTPCPullMemoryBounded is the attack on copy memory: 24 pulls
// with X-Number-Of-Streams: 16 from a source that sends almost 4 MiB per
// range and then holds the last byte. Unbounded, the box's buffers grow
// to 24 × 16 × 4 MiB = 1.5 GiB; with [tpc] buffer_memory = 64MiB its
// resident memory stays within the budget (plus the box's own), the
// budget metric never passes the limit, the copies past it wait, a
// copy from a well-behaved server still runs, and when the attacker
// hangs up every buffer is given back and nothing is left on disk.
func TestHTTPTPCPullMemoryBounded(t *testing.T) {
	const limit = 64 << 20
	mp, _ := peers.FreePort()
	b := startBox(t, 1, "--metrics-addr", "127.0.0.1:"+strconv.Itoa(mp),
		"--config", dosConfig(t, "[tpc]\nallow = [\"127.0.0.1\"]\nbuffer_memory = \"64MiB\"\n"))
	metrics := "http://127.0.0.1:" + strconv.Itoa(mp) + "/metrics"
	src := trickleSource(t, 64<<20) // 16 chunks: work for all 16 streams

	pem, err := os.ReadFile(b.certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	// The attacker comes from an address of its own, as a user with a
	// write token would; the well-behaved copy later from another.
	attacker := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(attackerIP)}}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DialContext: attacker.DialContext}}
	baseline := rssBytes(t, b.proc)

	ctx, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "COPY", fmt.Sprintf("%s/store/attack-%d.bin", b.httpsURL, i), nil)
			req.Header.Set("Source", src+"/big.bin")
			req.Header.Set("X-Number-Of-Streams", "16")
			req.Header.Set("Credential", "none")
			resp, err := client.Do(req)
			if err != nil {
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}

	var peak int64
	var peakBuffers, waiting float64
	for start := time.Now(); time.Since(start) < 8*time.Second; time.Sleep(200 * time.Millisecond) {
		peak = max(peak, rssBytes(t, b.proc))
		fams := scrape(t, metrics)
		peakBuffers = max(peakBuffers, value(fams, "sitebox_tpc_buffer_bytes", nil))
		waiting = max(waiting, value(fams, "sitebox_tpc_copies_waiting", nil))
	}
	t.Logf("under attack: resident %d MiB (before %d MiB), buffers %d MiB of %d, up to %v copies waiting",
		peak>>20, baseline>>20, int64(peakBuffers)>>20, limit>>20, waiting)
	if peak-baseline > limit+96<<20 {
		t.Errorf("resident memory grew by %d MiB under the attack, budget %d MiB", (peak-baseline)>>20, limit>>20)
	}
	if peakBuffers > limit || peakBuffers < limit/2 {
		t.Errorf("sitebox_tpc_buffer_bytes peaked at %v, want up to the limit %d", peakBuffers, limit)
	}
	if waiting < 1 {
		t.Error("no copy waited for memory: the attack did not reach the budget")
	}

	// A copy from another client, from a server that sends its data, gets
	// the first seat given back: the attacker's chunks, which held their
	// memory over 30 s while it waited, are cut off.
	good := writeRandom(t, filepath.Join(t.TempDir(), "good.bin"), 1<<20)
	goodSrc := fakeSource(t, len(good), func(w http.ResponseWriter, r *http.Request) {
		start, end := 0, len(good)-1
		if rg := r.Header.Get("Range"); rg != "" {
			fmt.Sscanf(rg, "bytes=%d-%d", &start, &end)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, len(good)))
			w.WriteHeader(http.StatusPartialContent)
		}
		w.Write(good[start : end+1])
	})
	began := time.Now()
	out := tpcCurl(t, b.certFile, b.httpsURL+"/store/good.bin", "Source: "+goodSrc+"/good.bin", "Credential: none")
	took := time.Since(began)
	t.Logf("a copy from another client during the attack took %v", took.Round(100*time.Millisecond))
	if !strings.HasSuffix(out, "success: Created\n") || took > 45*time.Second {
		t.Errorf("a copy during the attack: %q after %v, want success within the 30 s a stalled chunk may hold memory", out, took)
	}
	if cut := value(scrape(t, metrics), "sitebox_tpc_chunks_cut_total", nil); cut < 1 {
		t.Errorf("sitebox_tpc_chunks_cut_total = %v after the attacker's chunks stalled", cut)
	}
	sameFile(t, filepath.Join(b.pools[0], "good.bin"), good)

	hangUp()
	wg.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for value(scrape(t, metrics), "sitebox_tpc_buffer_bytes", nil) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("copy buffers still held 20 s after the clients hung up")
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The copies give their memory back before they remove their
	// temporaries: give them a moment.
	leftovers := func() (names []string) {
		ents, _ := os.ReadDir(b.pools[0])
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".sitebox-upload-") || strings.HasPrefix(e.Name(), "attack-") {
				names = append(names, e.Name())
			}
		}
		return names
	}
	for deadline := time.Now().Add(10 * time.Second); len(leftovers()) > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("left behind 10 s after the cut copies: %v", leftovers())
		}
	}
	// Memory goes back to the system once no copy runs, not minutes
	// later when the runtime gets round to it.
	settle := time.Now()
	for rssBytes(t, b.proc)-baseline > limit/2 {
		if time.Since(settle) > 15*time.Second {
			t.Fatalf("resident memory %d MiB 15 s after the copies ended (before the attack %d MiB)", rssBytes(t, b.proc)>>20, baseline>>20)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("after the attack: resident %d MiB after %v", rssBytes(t, b.proc)>>20, time.Since(settle).Round(100*time.Millisecond))
}
