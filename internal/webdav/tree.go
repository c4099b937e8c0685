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

// replaceTarget deletes an existing MOVE destination that is a
// collection; a file is left for the rename to replace atomically.
func (h *Handler) replaceTarget(ctx context.Context, ns store.Namespace, to string) error {
	fi, err := h.store.Stat(ctx, to)
	if err != nil || !fi.IsDir() {
		return nil
	}
	return removeTree(ctx, h.store, ns, to, 0)
}
