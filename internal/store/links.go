package store

import (
	"context"
	"errors"
)

// ErrLink: a path names, or goes through, a symbolic link where the
// operation takes none. A store with links in its namespace (an origin's
// pools, where the site may place them) follows them for reads, as
// xrootd does; a change never goes through one, and a tree walk never
// descends through one: the namespace policy is asked about the path the
// client named, so that path must be the object the operation acts on.
var ErrLink = errors.New("symbolic link")

// LinkError is the refusal of a symbolic link at Path (the namespace path
// of the link itself, which may be a parent of the path asked for). It
// unwraps to ErrLink and ErrPermission, so the frontends refuse it as
// they refuse by policy (403, kXR_NotAuthorized).
type LinkError struct {
	Path string
	// Why says what is not done through a link, for the client.
	Why string
}

func (e *LinkError) Error() string {
	return e.Path + " is a symbolic link: " + e.Why
}

func (e *LinkError) Unwrap() []error { return []error{ErrLink, ErrPermission} }

type noFollowKey struct{}

// NoFollow marks ctx for a tree walk (a recursive DELETE, COPY or the
// deletion of a MOVE's destination): under it a store resolves paths
// without following any symbolic link. Stat and List describe a link as
// the link (fs.ModeSymlink), and a path through a link, or Open of one,
// fails with a *LinkError. Stores without links in their namespace have
// nothing to do.
func NoFollow(ctx context.Context) context.Context {
	return context.WithValue(ctx, noFollowKey{}, true)
}

// FollowsLinks reports whether a store may follow symbolic links for a
// call made with ctx: true unless ctx came from NoFollow.
func FollowsLinks(ctx context.Context) bool {
	v, _ := ctx.Value(noFollowKey{}).(bool)
	return !v
}
