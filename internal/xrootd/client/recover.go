package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sitebox/internal/store"
)

// A file handle lives and dies with its connection: once the server
// restarts, or the connection drops, every request on the handle fails.
// XrdCl recovers a file open for reading by opening it again (at the
// director that sent it there, when there was one, else at the same
// server) and sending the failed requests again on the new handle
// (FileStateHandler's recovery); so does File, for reads. A file open
// for writing is not opened again: the bytes already written may be
// lost with the server, and only the writer can tell; its write fails.

// at is the file's connection and handle now.
func (f *File) at() (*Conn, [4]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.c, f.h
}

// waiter is the wait budget of one read on the file (Options.MaxWait):
// the reopen and the request sent again come out of it.
func (f *File) waiter() *waiter { return &waiter{max: f.fs.opts.Wait()} }

// recover opens the file again after a request on the connection
// failed with err (at a try that began then), when that is worth it: the
// file is open for reading, the connection dropped (not the server's
// answer, not the caller giving up), and the budget w has time left. A
// nil error says the request is to be sent again on the new handle.
// Concurrent reads that failed together open the file once.
func (f *File) recover(ctx context.Context, w *waiter, failed *Conn, err error, began time.Time) error {
	if f.open == nil || !errors.Is(err, ErrClosed) || ctx.Err() != nil || f.closed.Load() {
		return err
	}
	f.reopening.Lock()
	defer f.reopening.Unlock()
	if c, _ := f.at(); c != failed {
		return nil // another read opened it again meanwhile
	}
	w.out.Begin(began) // the failed request's time counts
	resp, c, rerr := f.fs.doWait(ctx, w, f.open)
	if rerr == nil {
		rerr = f.replace(resp, c)
	}
	if rerr != nil {
		return fmt.Errorf("%w; opening the file again failed: %w", err, rerr)
	}
	return nil
}

// replace makes the handle in an open's answer resp, from c, the file's,
// when it is the same file: a restarted server, or another replica,
// might hold another by now. The old connection is done with the file.
func (f *File) replace(resp []byte, c *Conn) error {
	nf, err := f.fs.opened(f.open, resp, c)
	if err != nil {
		return err
	}
	if f.infoOK && nf.infoOK && nf.info.Size != f.info.Size {
		nf.Close()
		return fmt.Errorf("%w: %s changed on the server while open (%d bytes, now %d)", store.ErrIO, f.name, f.info.Size, nf.info.Size)
	}
	f.mu.Lock()
	if f.closed.Load() {
		f.mu.Unlock()
		nf.Close()
		return ErrClosed
	}
	old := f.c
	f.c, f.h = nf.c, nf.h
	f.mu.Unlock()
	old.fileClosed()
	return nil
}
