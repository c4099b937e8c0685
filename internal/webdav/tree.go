package webdav

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"

	"sitebox/internal/store"
)

// Tree walks (a collection's DELETE and COPY, the deletion of a MOVE's or
// COPY's destination) run under store.NoFollow: a symbolic link in the
// tree is an entry in its own right, never a directory to descend. A
// DELETE removes the link itself; a COPY refuses a tree holding one
// (copying a link would make a new link whose relative target leads
// elsewhere from its new place; copying what it leads to would read
// through it). And the store refuses any path through a link, so a
// directory swapped for a link while a walk runs is never followed.

// maxTreeDepth bounds the recursion of a collection DELETE or COPY;
// deeper trees are refused rather than walked without end.
const maxTreeDepth = 64

// removeTree deletes a directory and everything under it (RFC 4918
// section 9.6.1: DELETE of a collection acts as Depth: infinity). Every
// entry goes through the store, so the namespace policy is asked for each
// one: an entry the requester may not delete stops the delete there with
// that refusal, and what was already deleted stays deleted, as with
// `rm -r`. ctx must come from store.NoFollow.
func removeTree(ctx context.Context, st store.Store, ns store.Namespace, name string, depth int) error {
	if depth > maxTreeDepth {
		return &store.PathError{Op: "delete", Path: name, Err: fmt.Errorf("%w: more than %d levels deep", store.ErrInvalid, maxTreeDepth)}
	}
	entries, err := st.List(ctx, name)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		child := path.Join(name, e.Name)
		if e.IsDir() {
			err = removeTree(ctx, st, ns, child, depth+1)
		} else {
			err = ns.Remove(ctx, child) // a file, or a link itself
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return ns.Rmdir(ctx, name)
}

// deleteDepth checks a DELETE's Depth header: only infinity (or none) is
// defined for collections.
func deleteDepth(r *http.Request) error {
	switch d := strings.TrimSpace(r.Header.Get("Depth")); strings.ToLower(d) {
	case "", "infinity":
		return nil
	default:
		return badRequest("DELETE of a collection takes Depth: infinity only, not " + d)
	}
}

// overlap refuses a MOVE or COPY whose destination is its source, lies
// inside it, or holds it: replacing the destination would delete the
// source, or the result would contain itself.
func overlap(op, name, to string) error {
	if to == name || store.HasPrefix(to, name) || store.HasPrefix(name, to) {
		return &httpError{http.StatusForbidden, op + " " + name + ": the destination " + to + " is the source, inside it or holds it"}
	}
	return nil
}

// needsReplacing reports whether an existing destination must be deleted
// before a MOVE or COPY can put src there: a collection (with all its
// members), or anything a collection is to take the place of. A file
// (or link) replaced by a file is left for the atomic rename.
func needsReplacing(src, dst store.FileInfo) bool {
	return dst.IsDir() || src.IsDir()
}

// replaceTarget deletes the existing destination to of a MOVE or COPY
// (needsReplacing), as DELETE would (RFC 4918 sections 9.8.4, 9.9.3).
// ctx must come from store.NoFollow.
func (h *Handler) replaceTarget(ctx context.Context, ns store.Namespace, to string, dst store.FileInfo) error {
	if dst.IsDir() {
		return removeTree(ctx, h.store, ns, to, 0)
	}
	return ns.Remove(ctx, to)
}

// copyDepth reads a collection COPY's Depth: infinity (the default) copies
// all its members, 0 the collection alone (RFC 4918 section 9.8.3).
func copyDepth(r *http.Request) (shallow bool, err error) {
	switch strings.ToLower(strings.TrimSpace(r.Header.Get("Depth"))) {
	case "", "infinity":
		return false, nil
	case "0":
		return true, nil
	}
	return false, badRequest("COPY of a collection takes Depth: 0 or infinity")
}

// checkTree walks the collection name as copyDir will, changing nothing,
// and refuses what copyDir would stop at: a link, a tree too deep. So a
// COPY refused for its source's shape creates nothing. ctx must come from
// store.NoFollow.
func (h *Handler) checkTree(ctx context.Context, name string, level int) error {
	if level > maxTreeDepth {
		return &store.PathError{Op: "copy", Path: name, Err: fmt.Errorf("%w: more than %d levels deep", store.ErrInvalid, maxTreeDepth)}
	}
	entries, err := h.store.List(ctx, name)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		from := path.Join(name, e.Name)
		switch {
		case hidden(e.Name):
		case e.IsLink():
			return copyLinkError(from)
		case e.IsDir():
			if err := h.checkTree(ctx, from, level+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyLinkError(name string) error {
	return &store.PathError{Op: "copy", Path: name, Err: &store.LinkError{Path: name,
		Why: "COPY copies no links (a copy of a relative link leads elsewhere); copy what it leads to by its own path"}}
}

// copyDir copies the collection name to to: the collection, and unless
// shallow all its members. Each member is read and written through the
// store, so the policy is asked for every one. ctx must come from
// store.NoFollow; checkTree has refused the tree's links already, and a
// link appearing meanwhile is refused here, never copied or followed.
func (h *Handler) copyDir(ctx context.Context, ns store.Namespace, name, to string, shallow bool, level int) error {
	if level > maxTreeDepth {
		return &store.PathError{Op: "copy", Path: name, Err: fmt.Errorf("%w: more than %d levels deep", store.ErrInvalid, maxTreeDepth)}
	}
	if err := ns.Mkdir(ctx, to, 0o755, false); err != nil {
		return err
	}
	if shallow {
		return nil
	}
	entries, err := h.store.List(ctx, name)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if hidden(e.Name) {
			continue
		}
		from, dst := path.Join(name, e.Name), path.Join(to, e.Name)
		switch {
		case e.IsLink():
			err = copyLinkError(from)
		case e.IsDir():
			err = h.copyDir(ctx, ns, from, dst, false, level+1)
		default:
			err = h.copyOne(ctx, from, dst)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
