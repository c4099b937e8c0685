package errno

import (
	"context"
	"fmt"
	"syscall"
	"testing"

	"sitebox/internal/store"
)

func TestInterruptedIsEINTR(t *testing.T) {
	// An https client's cancelled request: an i/o error wrapping the
	// cancellation.
	err := &store.PathError{Op: "propfind", Path: "/store", Err: fmt.Errorf("%w: %w", store.ErrIO, context.Canceled)}
	if code, ok := StoreCodes.CodeOf(err); !ok || code != syscall.EINTR {
		t.Errorf("CodeOf(%v) = %v, %v; want EINTR", err, code, ok)
	}
	if code, _ := StoreCodes.CodeOf(fmt.Errorf("%w: disk", store.ErrIO)); code != syscall.EIO {
		t.Errorf("a plain i/o error is %v, want EIO", code)
	}
	if got := StoreCodes.ErrOf(syscall.EINTR); got == context.Canceled {
		t.Error("a disk's EINTR is read as a cancellation (the row only sends)")
	}
}
