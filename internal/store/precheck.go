package store

import "context"

// Prechecker is implemented by stores that can tell, changing nothing,
// whether a namespace change would be refused now. A caller that makes
// several changes for one request (a MOVE or COPY that first deletes the
// destination it replaces) asks about each before making the first, so
// a refusal leaves everything as it was.
//
// The Call's Op is "rm" (a file, or a directory with all in it), "mv"
// (Path to To; whatever is at To now is left out of the store's own
// checks, a caller replacing it deletes it first, but not out of the
// policy's: replacing needs the right to delete), "mkdir" or "create".
// The answer is the refusal the change itself would meet; nil promises
// nothing more (a disk may fail, another client change the namespace).
type Prechecker interface {
	Precheck(ctx context.Context, c Call) error
}

// Precheck asks s's Prechecker about c; a store without one refuses
// nothing in advance.
func Precheck(ctx context.Context, s Store, c Call) error {
	p, ok := As[Prechecker](s)
	if !ok {
		return nil
	}
	return p.Precheck(ctx, c)
}
