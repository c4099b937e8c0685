// Package store is the kernel every sitebox backend (origin, cache,
// director, remote clients) implements and every protocol frontend
// (root://, https://) serves.
//
// A backend must implement Store: Stat, Open and List. It may implement
// the optional capabilities Creator, Checksummer, Locator, Namespace,
// SpaceReporter and Router, and its files Lender; callers find them with
// As (or the helpers Create, Checksum, Locate, RouteOf, LenderOf), and a
// missing one means "not here" (ErrReadOnly, ErrUnsupported, "served
// here", "read it"). A store or file that wraps another (the auth guard
// and its files) implements Capable: its As answers for the capabilities
// it offers, with views that do what the wrapper must (check the
// policy), so no caller reaches the inner one around it.
//
// A Router (a director) is asked before every request that names a path
// and answers with a Route: serve here, redirect, or wait; the frontends
// send redirects and waits themselves, they are not errors. A chain that
// does not route is never asked: the Mux offers Router only when a store
// mounted in it routes, a wrapper only when its inner one does, and
// RouteOf answers "here" without a call. A wrapper that decides about a
// request while it is routed (the auth guard checking the policy) leaves
// its decision for the call that follows (Leave, Take), so an operation
// is decided once.
//
// Paths are absolute, slash-separated and cleaned once, by the frontend,
// with ParseName (CleanPath); every store below trusts them. What the
// clean form drops, a trailing "/" or "/." saying "a directory or
// nothing", the frontend enforces with Name.Check before it calls a
// store. Who asks travels as an
// immutable *Request in the context (WithRequest, RequestFrom); what a
// proxy asks of its upstream, as its own Request (WithUpstream).
package store

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"
)

// Store is a namespace of files: what every backend honestly implements.
// Implementations must be safe for concurrent use. Errors should wrap the
// sentinels in errors.go (ErrNotFound, …) so the frontends can map them to
// protocol status codes in one place.
type Store interface {
	// Stat describes the file or directory at name.
	Stat(ctx context.Context, name string) (FileInfo, error)
	// Open opens an existing file for ranged reads; a directory is
	// refused with ErrIsDir (an https GET then lists it).
	Open(ctx context.Context, name string) (File, error)
	// List returns the entries of the directory at name, sorted by name.
	List(ctx context.Context, name string) ([]FileInfo, error)
}

// Creator is implemented by stores that can write files.
type Creator interface {
	// Create opens a file for writing as opts describes.
	Create(ctx context.Context, name string, opts CreateOptions) (WritableFile, error)
}

// Checksummer is implemented by stores that can checksum a whole file.
type Checksummer interface {
	// Checksum returns the hex digest of the whole file with algorithm
	// algo ("adler32", "crc32c"); ErrUnsupported for an unknown algorithm.
	Checksum(ctx context.Context, name, algo string) (string, error)
}

// Locator is implemented by stores that can say which servers hold a file.
type Locator interface {
	// Locate says which servers hold name. A plain disk store answers
	// with itself (an empty Endpoint meaning "here").
	Locate(ctx context.Context, name string) ([]Location, error)
}

// Namespace is implemented by stores that can change the namespace.
type Namespace interface {
	Mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error
	Remove(ctx context.Context, name string) error // a file
	Rmdir(ctx context.Context, name string) error  // an empty directory
	Rename(ctx context.Context, from, to string) error
	Chmod(ctx context.Context, name string, perm fs.FileMode) error
}

// SpaceReporter is implemented by stores that know their capacity.
type SpaceReporter interface {
	Space(ctx context.Context, name string) (Space, error)
}

// FileInfo describes one file or directory.
type FileInfo struct {
	Name    string      // base name ("" for the namespace root)
	Size    int64       // bytes; 0 or the OS's value for directories
	Mode    fs.FileMode // type bits and permissions
	ModTime time.Time
	ID      uint64 // stable identity (inode and device mixed), 0 if unknown
	// Writable reports whether the file may be modified through this store
	// (false on read-only exports).
	Writable bool
}

// IsDir reports whether the entry is a directory.
func (fi FileInfo) IsDir() bool { return fi.Mode.IsDir() }

// IsLink reports whether the entry is a symbolic link (described as
// itself, under NoFollow).
func (fi FileInfo) IsLink() bool { return fi.Mode&fs.ModeSymlink != 0 }

// File is an open file for ranged reads. ReadAt may be called concurrently,
// as io.ReaderAt allows; it returns io.EOF at or past the end like os.File.
type File interface {
	io.ReaderAt
	Stat() (FileInfo, error)
	Close() error
}

// ContextReaderAt is implemented by remote files whose reads a caller can
// bound or cancel (the cache gives each upstream fetch a deadline).
type ContextReaderAt interface {
	ReadAtContext(ctx context.Context, p []byte, off int64) (int, error)
}

// RangeReader is implemented by remote files that can stream a range as
// it arrives (one HTTP range request whose body is read piece by piece):
// a copy then writes each piece while it is still in the CPU's cache,
// instead of filling a chunk-sized buffer first. The reader yields
// exactly n bytes or fails; Close ends the request.
type RangeReader interface {
	ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error)
}

// WritableFile is a file opened by Create. ReadAt and WriteAt may be called
// concurrently on distinct ranges.
type WritableFile interface {
	File
	io.WriterAt
	Truncate(size int64) error
	Sync() error
}

// Discarder is implemented by a file Create made new for the request
// that holds it: Discard removes it again, whatever the request's scopes
// (it made the file), as an upload cleaning up its temporary after a
// failure does. It may be called after Close.
type Discarder interface {
	Discard(ctx context.Context) error
}

// Discard removes the file f that Create returned for name: through f's
// own Discard when it has one, else with ns.Remove.
func Discard(ctx context.Context, f File, ns Namespace, name string) error {
	if d, ok := f.(Discarder); ok {
		if err := d.Discard(ctx); !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	return ns.Remove(ctx, name)
}

// CreateOptions says how Create treats an existing file and missing parents.
type CreateOptions struct {
	Perm fs.FileMode // permissions of a new file (0 means 0644); an origin gives others none
	// Exclusive fails with ErrExist if the file exists (kXR_new, PUT with
	// If-None-Match: *).
	Exclusive bool
	// Truncate empties an existing file (kXR_delete, an HTTP PUT).
	Truncate bool
	// Update opens an existing file for update without truncating
	// (kXR_open_updt); it fails with ErrNotFound if the file does not exist.
	Update bool
	// MkParents creates missing parent directories (kXR_mkpath).
	MkParents bool
	// Final, when set, says the file is an upload's temporary that will
	// be given the name Final (in the same directory) once all of it
	// arrived (see Land): the policy is asked about Final, the name the
	// client asked for, and a refusal names it.
	Final string
	// Size, when above zero, is what will be written in all: an HTTP
	// upload declares it (Content-Length) instead of sending the body in
	// chunks, and a body that ends short of it fails.
	Size int64
}

// Location is one place holding a file, as answered by Locate.
type Location struct {
	// Endpoint is "host:port" of the server holding the file; empty means
	// the answering server itself.
	Endpoint string
	// Manager is true when the endpoint is a director that will redirect
	// further rather than a server holding the data.
	Manager  bool
	Writable bool
}

// Space is the capacity of the storage behind a path.
type Space struct {
	Total, Free int64 // bytes
	// LargestFree is the free space of the pool a new file would go to.
	LargestFree int64
	Files       int64 // inodes in use, if known
	FreeFiles   int64 // inodes free, if known
}

// SendFiler is implemented by files backed by an OS file descriptor, so a
// frontend can move bytes to a socket with sendfile(2) instead of copying
// through user space. Fd must stay valid until Close.
type SendFiler interface {
	Fd() uintptr
}

// ChecksumRequirer is implemented by files that must only move with
// per-page checksums: files of an integrity-protected namespace opened
// over a connection without TLS (see the auth guard). The root://
// frontend then accepts only pgread and pgwrite for them; https://, which
// has no per-block checksums, refuses to move their data at all.
type ChecksumRequirer interface {
	RequiresChecksums() bool
}
