package client

import (
	"errors"
	"strings"
	"testing"

	"sitebox/internal/outbound"
)

// What the login's krb5 parameters lead to before any ticket is made:
// no principal, a forwarded TGT wanted, or no credential to make one.
func TestKrb5CredentialRefusals(t *testing.T) {
	asked := 0
	noTickets := func() (*outbound.Kerberos, error) {
		asked++
		return nil, errors.New("no credential cache")
	}
	for params, want := range map[string]string{
		"":                                     "names no service principal",
		"xrootd/h.example.org@EXAMPLE.ORG,fwd": "forwarded ticket",
		"xrootd/h.example.org@EXAMPLE.ORG":     "krb5: no credential cache",
	} {
		if _, err := krb5Credential(noTickets, params); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", params, err, want)
		}
	}
	if asked != 1 {
		t.Errorf("the credential was asked for %d times, want once (only when a ticket is to be made)", asked)
	}
}

// Reading anonymously after the server offered krb5 says why, so a
// refusal names the cure.
func TestAnonNoteKrb5(t *testing.T) {
	if n := anonNote([]string{"krb5", "unix"}, Options{}, nil, nil); !strings.Contains(n, "run kinit") {
		t.Errorf("no tickets: %q", n)
	}
	if n := anonNote([]string{"ztn", "unix"}, Options{}, nil, nil); n != "" {
		t.Errorf("krb5 not offered: %q", n)
	}
}
