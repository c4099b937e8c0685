package sitebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"time"

	"golang.org/x/sync/errgroup"

	"sitebox/internal/store"
	"sitebox/internal/transfer"
)

// pick is one file of the list clients choose from at random.
type pick struct {
	src  int    // index of the URL (and so the server) it was found under
	path string // its path on that server
	size int64  // as listed
}

// listPicks turns the URLs into the pick list: a file URL adds itself,
// a directory URL its non-empty files. Subdirectories are
// not searched, so a run reads exactly what `sitebox ls URL` shows.
func listPicks(ctx context.Context, urls []string, opts transfer.Options) ([]pick, error) {
	var picks []pick
	for i, u := range urls {
		found, err := listURL(ctx, i, u, opts)
		if err != nil {
			return nil, fmt.Errorf("bench transfer: %s: %w", u, err)
		}
		picks = append(picks, found...)
	}
	return picks, nil
}

func listURL(ctx context.Context, src int, u string, opts transfer.Options) ([]pick, error) {
	r, err := transfer.Open(u, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fi, err := r.Store.Stat(ctx, r.Path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		if fi.Size <= 0 {
			return nil, errors.New("the file is empty: nothing to measure")
		}
		return []pick{{src: src, path: r.Path, size: fi.Size}}, nil
	}
	entries, err := r.Store.List(ctx, r.Path)
	if err != nil {
		return nil, err
	}
	var picks []pick
	for _, e := range entries {
		if !e.IsDir() && e.Size > 0 {
			picks = append(picks, pick{src: src, path: path.Join(r.Path, e.Name), size: e.Size})
		}
	}
	if len(picks) == 0 {
		return nil, fmt.Errorf("no non-empty files in the directory (%d entries; subdirectories are not searched)", len(entries))
	}
	return picks, nil
}

// errorPause is how long a client waits after a failed copy, so a dead
// server yields a countable number of errors rather than a busy loop.
const errorPause = 200 * time.Millisecond

// transferClient is one benchmark client. Like a separate `sitebox get`
// process, it has its own connection to each server, reused from file
// to file and re-made after an error. Not safe for concurrent use: one
// goroutine runs it.
type transferClient struct {
	opts    transfer.Options
	urls    []string
	picks   []pick
	stats   *pointStats
	rng     *rand.Rand
	remotes map[int]*transfer.Remote
	// bufs holds transfer.Parallel chunk buffers, reused so the run
	// measures the network and the server, not this process's allocator.
	bufs chan []byte
}

// run copies random picks until ctx ends.
func (c *transferClient) run(ctx context.Context) {
	c.remotes = map[int]*transfer.Remote{}
	c.bufs = make(chan []byte, transfer.Parallel)
	for range transfer.Parallel {
		c.bufs <- make([]byte, transfer.ChunkSize)
	}
	defer func() {
		for i := range c.remotes {
			c.drop(i)
		}
	}()
	for ctx.Err() == nil {
		t := c.picks[c.rng.IntN(len(c.picks))]
		err := c.copy(ctx, t)
		if ctx.Err() != nil {
			return // the window closed: the copy was cut short, not failed
		}
		if err == nil {
			c.stats.files.Add(1)
			continue
		}
		c.stats.fail(fmt.Errorf("%s (from %s): %w", t.path, c.urls[t.src], err))
		c.drop(t.src)
		select {
		case <-ctx.Done():
		case <-time.After(errorPause):
		}
	}
}

func (c *transferClient) remote(src int) (*transfer.Remote, error) {
	if r := c.remotes[src]; r != nil {
		return r, nil
	}
	r, err := transfer.Open(c.urls[src], c.opts)
	if err != nil {
		return nil, err
	}
	c.remotes[src] = r
	return r, nil
}

func (c *transferClient) drop(src int) {
	if r := c.remotes[src]; r != nil {
		r.Close()
		delete(c.remotes, src)
	}
}

// copy reads t whole and discards it, the way transfer.Get fetches a
// file (ChunkSize ranged reads, Parallel in flight) minus the local
// write: the bytes go to /dev/null. Each completed chunk is counted at
// once, so the per-second samples follow the data as it arrives.
func (c *transferClient) copy(ctx context.Context, t pick) error {
	r, err := c.remote(t.src)
	if err != nil {
		return err
	}
	f, err := r.Store.Open(ctx, t.path)
	if err != nil {
		return err
	}
	defer f.Close()
	size := t.size
	if fi, err := f.Stat(); err == nil {
		size = fi.Size
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(transfer.Parallel)
	for off := int64(0); off < size; off += transfer.ChunkSize {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			// SetLimit caps the goroutines at the number of buffers,
			// so one is always free here.
			buf := <-c.bufs
			defer func() { c.bufs <- buf }()
			b := buf[:min(transfer.ChunkSize, size-off)]
			// Bounded by ctx where the client can be (sitebox's root://
			// and https:// clients), so the end of the window stops
			// reads in flight instead of waiting for them.
			n, err := store.ReadAtContext(gctx, f, b, off)
			if n < len(b) {
				if err == nil || errors.Is(err, io.EOF) {
					err = fmt.Errorf("file ended early: %d bytes at offset %d, expected %d", n, off, len(b))
				}
				return err
			}
			c.stats.bytes.Add(int64(n))
			return nil
		})
	}
	return g.Wait()
}
