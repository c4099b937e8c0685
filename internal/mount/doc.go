// Package mount is `sitebox mount`: a POSIX view of a federation server
// (root://, roots://, https://) as a FUSE filesystem, so programs that
// only know files (shells, compilers, ROOT macros written for a local
// disk) read and write the federation as a directory.
//
// The filesystem speaks FUSE's raw protocol (go-fuse's RawFileSystem):
// each reply carries its own entry and attribute lifetimes, which is
// how a read-only mount lets the kernel cache names for a minute and a
// mount shared by many users lets it cache nothing.
//
// Metadata comes from whole directory listings with stat information
// (one kXR_dirlist with kXR_dstat, one PROPFIND Depth 1), kept for a
// TTL in a bounded LRU (dircache.go): a listing answers LOOKUP, GETATTR
// and "no such file" for every name of its directory. Reads go to the
// store the caller's view names (the remote server, or a local
// cache.Cache in front of it, so each byte crosses the WAN once). Writes
// are close-to-open (write.go): the bytes go to a local temporary file
// and are uploaded when the file is flushed or released, and a failed
// upload fails close(2).
//
// Who asks (identity.go): the FUSE request names the caller's uid. A
// mount for one user acts with that user's credentials; a mount run by
// root with allow_other finds each caller's own token or X.509 proxy by
// the grid's file names, keeps one upstream client and one metadata
// cache per credential, and never lets the kernel cache a name or an
// attribute across callers.
package mount
