package auth

import (
	"fmt"

	"sitebox/internal/store"
)

// Denied is a refusal: its message is the reason, fit to show a client
// ("token expired at …"), and it unwraps to store.ErrPermission so the
// frontends map it to kXR_NotAuthorized / HTTP 403 in their one place.
// It never contains the token itself.
type Denied struct {
	Reason string
	// Cause is the underlying failure, if any (a JWKS fetch error), or
	// store.ErrNoToken; its text is already part of Reason.
	Cause error
}

func (e *Denied) Error() string { return e.Reason }

// Unwrap lets errors.Is see store.ErrPermission (and the cause).
func (e *Denied) Unwrap() []error {
	if e.Cause != nil {
		return []error{store.ErrPermission, e.Cause}
	}
	return []error{store.ErrPermission}
}

// deny builds a Denied from a format, like fmt.Errorf without %w.
func deny(format string, args ...any) *Denied {
	return &Denied{Reason: fmt.Sprintf(format, args...)}
}

// needToken is the refusal of a request that came without a token where
// one is required; it unwraps to store.ErrNoToken.
func needToken(format string, args ...any) *Denied {
	return &Denied{Reason: "no token: " + fmt.Sprintf(format, args...), Cause: store.ErrNoToken}
}
