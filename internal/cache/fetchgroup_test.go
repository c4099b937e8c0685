package cache

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/store"
)

// readvStore is an upstream whose files read scattered ranges at once,
// as root:// ones do, counting the requests.
type readvStore struct {
	*countingStore
	readvs atomic.Int64
}

func (s *readvStore) Open(ctx context.Context, name string) (store.File, error) {
	f, err := s.countingStore.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &readvFile{File: f, s: s}, nil
}

type readvFile struct {
	store.File
	s *readvStore
}

func (f *readvFile) ReadV(ctx context.Context, bufs [][]byte, offs []int64) error {
	f.s.readvs.Add(1)
	for i := range bufs {
		if _, err := f.ReadAt(bufs[i], offs[i]); err != nil {
			return err
		}
	}
	return nil
}

// TestScatteredMissesOneReadv: a readv's scattered misses, announced
// with WillNeed, go upstream as one vector read, and every segment then
// reads the upstream's bytes.
func TestScatteredMissesOneReadv(t *testing.T) {
	e := newEnv(t, nil)
	rs := &readvStore{countingStore: e.up}
	e.cfg.Routes[0].Upstreams[0].Streams = []store.Store{rs, rs, rs}
	e.restart()
	want := e.file("scattered", 40*64<<10)
	f, err := e.c.Open(t.Context(), "/store/scattered")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	readScattered(t, f, want)
	// 6 pages in 4 runs, 192 KiB: one group.
	if n := rs.readvs.Load(); n != 1 {
		t.Errorf("%d upstream vector reads, want 1", n)
	}
	if got := e.up.bytes.Load(); got != scatteredPages*blockmap.CheckPage {
		t.Errorf("%d bytes upstream, want the %d pages touched (%d)", got, scatteredPages, scatteredPages*blockmap.CheckPage)
	}
}

// scatteredRanges are what readScattered reads: scatteredRuns runs of
// scatteredPages pages in all (32 KiB pages; two ranges cross a page
// boundary), in a file of 2,240 KiB or more.
var scatteredRanges = [][2]int64{{3 * 64 << 10, 1000}, {10*64<<10 + 5, 32 << 10}, {20 * 64 << 10, 100}, {33*64<<10 + 60000, 10000}}

const scatteredRuns, scatteredPages = 4, 6

// readScattered reads scatteredRanges of f as a readv does (announced
// with WillNeed, then read one by one) and checks them against want.
func readScattered(t *testing.T, f store.File, want []byte) {
	t.Helper()
	ranges := scatteredRanges
	f.(*File).WillNeed(ranges)
	for _, r := range ranges {
		got := make([]byte, r[1])
		if _, err := f.ReadAt(got, r[0]); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[r[0]:r[0]+r[1]]) {
			t.Fatalf("range %v: wrong bytes", r)
		}
	}
}
