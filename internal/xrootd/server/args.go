package server

import (
	"strings"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// argPath turns a request payload into a namespace name and its CGI.
// The "?cgi" part never becomes part of the path; a trailing NUL, which
// some clients send, is dropped, while one inside the path is refused by
// CleanPath like every other control byte and any "..". The name keeps
// whether the path ended in "/" or "/." (store.Name), which every
// request but a mkdir checks before it acts (store.Name.Check).
func argPath(data []byte) (name store.Name, opaque string, err error) {
	if n := len(data); n > 0 && data[n-1] == 0 {
		data = data[:n-1]
	}
	if len(data) == 0 {
		return store.Name{}, "", errorf(proto.ErrArgMissing, "no path given")
	}
	p, cgi := store.SplitOpaque(string(data))
	if len(p) > store.MaxPathLen {
		return store.Name{}, "", errorf(proto.ErrArgTooLong, "path of %d bytes exceeds the limit of %d", len(p), store.MaxPathLen)
	}
	if hasParentRef(p) {
		// XRootD refuses relative paths as a permission problem (3010),
		// not a bad argument; clients and scripts check the code.
		return store.Name{}, "", errorf(proto.ErrNotAuthorized, "%s: a path with '..' is not allowed", p)
	}
	name, err = store.ParseName(p)
	if err != nil {
		return store.Name{}, "", err
	}
	return name, cgi, nil
}

func hasParentRef(p string) bool {
	for p != "" { // each element in turn, without splitting the path into a slice
		var elem string
		elem, p, _ = strings.Cut(p, "/")
		if elem == ".." {
			return true
		}
	}
	return false
}
