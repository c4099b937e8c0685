// Package nbio makes the system calls that cannot block — reads and
// writes of non-blocking sockets, reads of bytes already in the page
// cache — without telling the Go scheduler that the goroutine may block.
//
// Why: every system call made the usual way (syscall.Syscall) after all
// of the process's threads went idle wakes the runtime's monitor thread
// (sysmon), which then polls every 20 µs for a millisecond in case the
// call blocks and its processor must be handed on. A server that idles
// between requests — one client reading at a time, as analysis jobs do —
// pays that on every request: half of the root:// server's context
// switches per vector read were the monitor's, each one also taking the
// CPU from the server or the client on the same core. A call that cannot
// block needs none of it, so these use syscall.RawSyscall; anything that
// may wait (a read from disk, a full socket) returns at once and the
// caller waits the usual way (in the network poller, or with a blocking
// call).
//
// Only small transfers (up to MaxQuick bytes) should go this way: a call
// copying megabytes holds its processor for hundreds of microseconds,
// long enough that the scheduler should be free to hand it on.
package nbio

import "errors"

// MaxQuick is the largest transfer callers make with these calls.
const MaxQuick = 1 << 20

// ErrNotResident is returned by ReadResident when not all of the bytes
// asked for are in the page cache; reading the rest would wait for the
// disk.
var ErrNotResident = errors.New("nbio: bytes not in the page cache")
