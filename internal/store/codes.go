package store

import "errors"

// Codes is one protocol's table of error codes (kXR_ codes, HTTP
// statuses) and the sentinels they carry. Its server turns errors into
// codes with CodeOf and its client turns codes back into errors with ErrOf,
// both from the same rows, so the two directions cannot drift apart.
type Codes[C comparable] []Code[C]

// Code is one row of a Codes table.
type Code[C comparable] struct {
	Code C
	Err  error
	Way  Way
}

// Way says which directions read a row. Most rows go both ways; the others
// record where a protocol has fewer codes than the store has sentinels (a
// server answers several sentinels with one code, its client reads that
// code as one of them) or where other servers answer with codes of their
// own.
type Way uint8

const (
	Both  Way = iota // a server answers Err with Code and a client reads Code as Err
	Sends            // only a server answers Err with Code
	Reads            // only a client reads Code as Err
)

// CodeOf returns the code of the first row, in table order, whose sentinel
// err wraps; false when none does.
func (t Codes[C]) CodeOf(err error) (C, bool) {
	for _, r := range t {
		if r.Way != Reads && errors.Is(err, r.Err) {
			return r.Code, true
		}
	}
	var zero C
	return zero, false
}

// ErrOf returns the sentinel a client reads code as; nil for codes the
// table does not know.
func (t Codes[C]) ErrOf(code C) error {
	for _, r := range t {
		if r.Way != Sends && r.Code == code {
			return r.Err
		}
	}
	return nil
}
