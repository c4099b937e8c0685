package cksum

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestForms(t *testing.T) {
	// RFC 3230 examples carry md5 in base64; XrdHttp sends adler32 in hex.
	if got := DigestValue(MD5, "6f5902ac237024bdd0c176cb93063dc4"); got != "b1kCrCNwJL3QwXbLkwY9xA==" {
		t.Errorf("md5 digest value %q", got)
	}
	if got := DigestValue(Adler32, "1e720467"); got != "1e720467" {
		t.Errorf("adler32 digest value %q", got)
	}
	for _, c := range []struct{ algo, in, want string }{
		{MD5, "b1kCrCNwJL3QwXbLkwY9xA==", "6f5902ac237024bdd0c176cb93063dc4"},
		{MD5, "6F5902AC237024BDD0C176CB93063DC4", "6f5902ac237024bdd0c176cb93063dc4"},
		{Adler32, "1e720467", "1e720467"},
		{Adler32, "e720467", "0e720467"},
		{MD5, "b1kC", ""},
		{Adler32, "xyz", ""},
	} {
		got, err := FromDigest(c.algo, c.in)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("FromDigest(%s, %q) = %q, %v; want %q", c.algo, c.in, got, err, c.want)
		}
	}
}

func TestOffered(t *testing.T) {
	var zero Offered
	if !zero.Has(Adler32) || !zero.Has(CRC32C) || zero.Has(MD5) {
		t.Errorf("zero value offers %v", zero.Names())
	}
	o, err := NewOffered([]string{"MD5", "adler32", "md5"})
	if err != nil || !o.Has(MD5) || strings.Join(o.Names(), ",") != "adler32,crc32c,md5" {
		t.Errorf("offered %v, %v", o.Names(), err)
	}
	for _, bad := range []string{"sha1", ""} {
		if _, err := NewOffered([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestKeeperSharesComputation: clients asking at once for the md5 of
// one file cause one computation, and no more than MaxComputing run.
func TestKeeperSharesComputation(t *testing.T) {
	dir := t.TempDir()
	k := &Keeper{MaxComputing: 1}
	k.turns = make(chan struct{}, 1)
	k.turns <- struct{}{} // the only turn is taken...
	f := writeFile(t, filepath.Join(dir, "big"), strings.Repeat("y", 4<<20))
	want, _ := Compute(strings.NewReader(strings.Repeat("y", 4<<20)), MD5)
	const n = 8
	var wg sync.WaitGroup
	sums := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i], _ = k.Sum(context.Background(), f, MD5)
		}()
	}
	waitFor(t, func() bool {
		k.mu.Lock()
		defer k.mu.Unlock()
		for key, fl := range k.flights {
			if key.algo == MD5 && fl.waiters == n {
				return true
			}
		}
		return false
	})
	if r := k.runs.Load(); r != 0 {
		t.Fatalf("%d computations ran while the only turn was taken", r)
	}
	<-k.turns // ...and given back
	wg.Wait()
	for i, s := range sums {
		if s != want {
			t.Errorf("client %d got %q, want %q", i, s, want)
		}
	}
	if r := k.runs.Load(); r != 1 {
		t.Errorf("%d computations for %d clients of one file, want 1", r, n)
	}
}

// TestKeeperLastWaiterStops: when every client waiting for a sum gives
// up, its computation stops and a later request starts afresh.
func TestKeeperLastWaiterStops(t *testing.T) {
	f := writeFile(t, filepath.Join(t.TempDir(), "f"), "Wikipedia")
	k := &Keeper{MaxComputing: 1}
	k.turns = make(chan struct{}, 1)
	k.turns <- struct{}{} // no turn for anyone yet
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := k.Sum(ctx, f, Adler32); err == nil {
		t.Fatal("no turn, yet a sum")
	}
	waitFor(t, func() bool { k.mu.Lock(); defer k.mu.Unlock(); return len(k.flights) == 0 })
	<-k.turns
	if sum, err := k.Sum(context.Background(), f, Adler32); err != nil || sum != "11e60398" {
		t.Errorf("after the first client gave up: %q, %v", sum, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}
