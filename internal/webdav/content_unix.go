//go:build unix

package webdav

import (
	"io"
	"os"
	"syscall"

	"sitebox/internal/store"
)

// contentOf returns what ServeContent reads and a func to call after. When
// the store's file has an OS descriptor it hands ServeContent an *os.File
// on a duplicate of it, so net/http can use sendfile(2) on plain-HTTP
// connections; the duplicate is ours to close and leaves the store's file
// untouched (the store reads with pread, so the shared offset does not
// matter). The file is limited to size bytes as statted.
func contentOf(f store.File, size int64) (io.ReadSeeker, func()) {
	sf, ok := f.(store.SendFiler)
	if !ok {
		return sectionOf(f, size), func() {}
	}
	fd, err := syscall.Dup(int(sf.Fd()))
	if err != nil {
		return sectionOf(f, size), func() {}
	}
	syscall.CloseOnExec(fd)
	of := os.NewFile(uintptr(fd), "content")
	if st, err := of.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() != size {
		// Not a plain file, or it changed size since Stat: serve exactly the
		// statted bytes through ReadAt instead.
		of.Close()
		return sectionOf(f, size), func() {}
	}
	return of, func() { of.Close() }
}
