package store

import (
	"errors"
	"fmt"
	"testing"
)

func TestCodes(t *testing.T) {
	tab := Codes[int]{
		{Code: 1, Err: ErrReadOnly, Way: Sends},
		{Code: 2, Err: ErrPermission},
		{Code: 3, Err: ErrPermission, Way: Reads},
		{Code: 4, Err: ErrNameTooLong},
		{Code: 5, Err: ErrInvalid},
	}
	for _, tc := range []struct {
		err  error
		code int
		ok   bool
	}{
		{&PathError{Op: "write", Path: "/a", Err: ErrReadOnly}, 1, true},
		{fmt.Errorf("%w: no token", ErrPermission), 2, true},
		{ErrNameTooLong, 4, true}, // the first row it wraps, not ErrInvalid's
		{ErrInvalid, 5, true},
		{ErrIO, 0, false},
	} {
		if code, ok := tab.CodeOf(tc.err); code != tc.code || ok != tc.ok {
			t.Errorf("CodeOf(%v) = %d, %v; want %d, %v", tc.err, code, ok, tc.code, tc.ok)
		}
	}
	for code, want := range map[int]error{1: nil, 2: ErrPermission, 3: ErrPermission, 4: ErrNameTooLong, 6: nil} {
		if got := tab.ErrOf(code); !errors.Is(got, want) || (want == nil) != (got == nil) {
			t.Errorf("ErrOf(%d) = %v, want %v", code, got, want)
		}
	}
}
