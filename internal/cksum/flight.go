package cksum

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// flight is one computation of one version of a file's sum, shared by
// everyone asking for it meanwhile.
type flight struct {
	key     memKey
	done    chan struct{} // closed when sum and err are set
	sum     string
	err     error
	waiters int                // guarded by Keeper.mu
	cancel  context.CancelFunc // stops the computation
}

// join returns the flight computing key, starting one if none runs. A
// new flight reads a duplicate of f's descriptor, so it does not depend
// on the caller that started it keeping f open.
func (k *Keeper) join(f *os.File, key memKey) (*flight, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if fl := k.flights[key]; fl != nil {
		fl.waiters++
		return fl, nil
	}
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, fmt.Errorf("checksum: %w", err)
	}
	own := os.NewFile(uintptr(fd), f.Name())
	ctx, cancel := context.WithCancel(context.Background())
	fl := &flight{key: key, done: make(chan struct{}), waiters: 1, cancel: cancel}
	if k.flights == nil {
		k.flights = make(map[memKey]*flight)
	}
	if k.turns == nil {
		n := k.MaxComputing
		if n <= 0 {
			n = 4
		}
		k.turns = make(chan struct{}, n)
	}
	k.flights[key] = fl
	go k.compute(ctx, fl, own)
	return fl, nil
}

// compute runs fl when its turn comes and publishes the result. The sum
// is kept only if the file did not change while it was read.
func (k *Keeper) compute(ctx context.Context, fl *flight, f *os.File) {
	defer f.Close()
	defer func() {
		k.mu.Lock()
		if k.flights[fl.key] == fl {
			delete(k.flights, fl.key)
		}
		k.mu.Unlock()
		fl.cancel()
		close(fl.done)
	}()
	select {
	case k.turns <- struct{}{}:
	case <-ctx.Done():
		fl.err = ctx.Err()
		return
	}
	defer func() { <-k.turns }()
	k.runs.Add(1)
	algo := fl.key.algo
	var before, after unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &before); err != nil {
		fl.err = fmt.Errorf("checksum: stat: %w", err)
		return
	}
	version := fmt.Sprintf("%d:%d", before.Size, before.Mtim.Nano())
	if v, ok := k.lookup(f, before, algo, version); ok {
		fl.sum = v // kept by an earlier flight while this one waited its turn
		return
	}
	fl.sum, fl.err = Compute(&sectionAll{ctx: ctx, f: f}, algo)
	if fl.err == nil && unix.Fstat(int(f.Fd()), &after) == nil && keyOf(after, algo) == keyOf(before, algo) {
		k.keep(f, before, algo, version, fl.sum)
	}
}

// wait waits for fl's result or for ctx to end; the last waiter to give
// up stops the computation.
func (k *Keeper) wait(ctx context.Context, fl *flight) (string, error) {
	select {
	case <-fl.done:
		return fl.sum, fl.err
	case <-ctx.Done():
	}
	k.mu.Lock()
	fl.waiters--
	if fl.waiters == 0 {
		if k.flights[fl.key] == fl {
			delete(k.flights, fl.key) // a new request starts afresh
		}
		fl.cancel()
	}
	k.mu.Unlock()
	return "", ctx.Err()
}
