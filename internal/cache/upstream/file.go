package upstream

import (
	"context"
	"fmt"
	"sync"

	"sitebox/internal/store"
)

// File is the upstream side of one cached file: its open handles, one per
// (server, stream), opened on first use, so the file's blocks travel over
// all streams at once. Opens on different streams proceed in parallel.
type File struct {
	route *Route
	path  string
	// want says what the cached copy expects of the upstream file: its
	// size (a handle on another version is refused) and the client VO
	// passed upstream (see upCtx).
	want func() (size int64, vo string)

	mu      sync.Mutex
	handles map[[2]int]*handle
}

// File is the upstream side of the cached file at path p of the route;
// want says what the cached copy expects of it (see File.want).
func (r *Route) File(p string, want func() (size int64, vo string)) *File {
	return &File{route: r, path: p, want: want}
}

type handle struct {
	u     *Server       // whose open count it is in
	ready chan struct{} // closed when f and err are set
	f     store.File
	err   error
}

type handleState int

const (
	handleNone handleState = iota
	handleOpening
	handleReady // open, or failed to (the fetch then fails over at once)
)

// state says whether a handle on stream si of server ui is open.
func (h *File) state(ui, si int) handleState {
	h.mu.Lock()
	uh := h.handles[[2]int{ui, si}]
	h.mu.Unlock()
	if uh == nil {
		return handleNone
	}
	select {
	case <-uh.ready:
		return handleReady
	default:
		return handleOpening
	}
}

// has reports whether a handle on stream si of server ui is open or
// opening.
func (h *File) has(ui, si int) bool { return h.state(ui, si) != handleNone }

// retire closes uh off the caller's path (a close waits for the
// upstream's answer). It leaves the open count at once when uh is open
// already, so a cap check right after sees it gone.
func (uh *handle) retire() {
	select {
	case <-uh.ready:
		if uh.f != nil {
			uh.u.open.Add(-1)
			go uh.f.Close()
		}
	default:
		go func() {
			<-uh.ready
			if uh.f != nil {
				uh.u.open.Add(-1)
				uh.f.Close()
			}
		}()
	}
}

// open returns the file's handle on stream si of server ui, opening it,
// and keeps the server within its cap of open files.
func (h *File) open(ctx context.Context, ui, si int) (store.File, error) {
	key := [2]int{ui, si}
	h.mu.Lock()
	uh := h.handles[key]
	if uh == nil {
		if h.handles == nil {
			h.handles = map[[2]int]*handle{}
		}
		uh = &handle{u: h.route.servers[ui], ready: make(chan struct{})}
		h.handles[key] = uh
		h.mu.Unlock()
		uh.f, uh.err = h.openAt(ctx, uh.u, si)
		if uh.err != nil {
			h.mu.Lock()
			if h.handles[key] == uh {
				delete(h.handles, key)
			}
			h.mu.Unlock()
		} else {
			uh.u.open.Add(1) // before ready: a retire waits for it
		}
		close(uh.ready)
	} else {
		h.mu.Unlock()
	}
	select {
	case <-uh.ready:
		if uh.err == nil {
			h.route.set.trim(uh.u)
		}
		return uh.f, uh.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// openAt opens the file on stream si of u, refusing another version.
func (h *File) openAt(ctx context.Context, u *Server, si int) (store.File, error) {
	size, vo := h.want()
	f, err := u.Streams[si].Open(upCtx(ctx, u, vo), h.route.upPath(u, h.path))
	if err != nil {
		return nil, err
	}
	// Blocks from another version of the file must not mix with ours.
	got := int64(-1)
	if sz, ok := f.(interface{ Size() int64 }); ok {
		got = sz.Size()
	} else if fi, err := f.Stat(); err == nil {
		got = fi.Size
	}
	if got >= 0 && got != size {
		go f.Close()
		return nil, fmt.Errorf("upstream copy has %d bytes, the cached version %d: file changed", got, size)
	}
	return f, nil
}

// dropServer closes the handles on server ui: a cut usually takes every
// connection to it, so the retry re-opens on a fresh one.
func (h *File) dropServer(ui int) {
	h.closeWhere(func(k [2]int, _ *handle) bool { return k[0] == ui })
}

// CloseAll closes every handle and says how many there were on u (on
// all servers when u is nil).
func (h *File) CloseAll(u *Server) int {
	n := 0
	h.closeWhere(func(_ [2]int, uh *handle) bool {
		if u == nil || uh.u == u {
			n++
		}
		return true
	})
	return n
}

func (h *File) closeWhere(match func([2]int, *handle) bool) {
	h.mu.Lock()
	var gone []*handle
	for k, uh := range h.handles {
		if match(k, uh) {
			gone = append(gone, uh)
			delete(h.handles, k)
		}
	}
	h.mu.Unlock()
	for _, uh := range gone {
		uh.retire()
	}
}

// Handles is the number of handles open or opening.
func (h *File) Handles() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.handles)
}
