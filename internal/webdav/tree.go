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

// maxTreeDepth bounds the recursion of a collection DELETE; deeper trees
// are refused rather than walked without end.
const maxTreeDepth = 64

// removeTree deletes a directory and everything under it (RFC 4918
// section 9.6.1: DELETE of a collection acts as Depth: infinity). Every
// entry goes through the store, so the namespace policy is asked for each
// one: an entry the requester may not delete stops the delete there with
// that refusal, and what was already deleted stays deleted, as with
// `rm -r`.
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
			err = ns.Remove(ctx, child)
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

// replaceTarget deletes an existing MOVE or COPY destination that a
// rename or file copy cannot replace by itself: a collection (with all
// its members), or a file that a collection from is to take the place of.
// A file replaced by a file is left for the atomic rename.
func (h *Handler) replaceTarget(ctx context.Context, ns store.Namespace, from, to string) error {
	fi, err := h.store.Stat(ctx, to)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		return removeTree(ctx, h.store, ns, to, 0)
	}
	if src, err := h.store.Stat(ctx, from); err == nil && src.IsDir() {
		return ns.Remove(ctx, to)
	}
	return nil
}

// copyTree copies a collection: with Depth: infinity (the default) all
// its members, with Depth: 0 the collection alone (RFC 4918 section
// 9.8.3). Each member is read and written through the store, so the
// policy is asked for every one.
func (h *Handler) copyTree(r *http.Request, ns store.Namespace, name, to string) error {
	depth := strings.ToLower(strings.TrimSpace(r.Header.Get("Depth")))
	if depth != "" && depth != "infinity" && depth != "0" {
		return badRequest("COPY of a collection takes Depth: 0 or infinity")
	}
	return h.copyDir(r.Context(), ns, name, to, depth == "0", 0)
}

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
		if e.IsDir() {
			err = h.copyDir(ctx, ns, from, dst, false, level+1)
		} else {
			err = h.copyOne(ctx, from, dst)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
