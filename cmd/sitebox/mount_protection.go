package main

import (
	"fmt"
	"strings"

	"sitebox/internal/auth"
	"sitebox/internal/remote"
)

// protection is how a mount's data is protected on the wire, as
// Lustre's security flavours: auth (the credential is checked, the data
// travels as the URL's scheme carries it), integrity (no altered byte
// is served) and privacy (nothing travels in clear).
type protection auth.Level

// The mount's levels are the server's (auth.Level), "none" being called
// auth here: the credential is still checked.
const (
	protAuth      = protection(auth.LevelNone)
	protIntegrity = protection(auth.LevelIntegrity)
	protPrivacy   = protection(auth.LevelPrivacy)
)

func parseProtection(s string) (protection, error) {
	if strings.EqualFold(strings.TrimSpace(s), "auth") {
		return protAuth, nil
	}
	l, err := auth.ParseLevel(s)
	if err != nil {
		return protAuth, fmt.Errorf("--protection %q: want auth, integrity or privacy", s)
	}
	return protection(l), nil
}

func (p protection) String() string {
	if p == protAuth {
		return "auth"
	}
	return auth.Level(p).String()
}

// check refuses a URL over which the level cannot be kept, before
// anything is sent to it.
//
// privacy needs TLS for the whole session: roots:// connections switch
// to TLS before login and stay so (the client never falls back, and
// keeps TLS for the servers redirects lead to); https:// refuses
// redirects to plain http://. integrity is TLS's over roots:// and
// https:// (every record authenticated) and, over root:// and roots://
// alike, the page CRC32Cs of kXR_pgread checked against what the server
// keeps (pageChecks); plain http:// can give neither.
func (p protection) check(u *remote.URL) error {
	switch {
	case p == protPrivacy && !remote.Encrypted(u.Scheme):
		return fmt.Errorf("--protection privacy refuses %s: its data would travel in clear; use roots:// or https://", u.Raw)
	case p == protIntegrity && !u.XRootD() && !remote.Encrypted(u.Scheme):
		return fmt.Errorf("--protection integrity refuses %s: plain http:// carries no checksum for a part of a file; use https:// (TLS checks every byte) or root:// (page checksums)", u.Raw)
	}
	return nil
}

// pageChecks says whether reads go as kXR_pgread with every page's
// CRC32C checked: integrity over root:// and roots://.
func (p protection) pageChecks(u *remote.URL) bool { return p >= protIntegrity && u.XRootD() }

// what is the level as the mount's log names it, with how it is kept.
func (p protection) what(u *remote.URL) string {
	switch {
	case p == protPrivacy && p.pageChecks(u):
		return "privacy (TLS for the whole session; page CRC32C, kXR_pgread)"
	case p == protPrivacy:
		return "privacy (TLS for the whole session)"
	case p.pageChecks(u) && remote.Encrypted(u.Scheme):
		return "integrity (TLS and page CRC32C, kXR_pgread)"
	case p.pageChecks(u):
		return "integrity (page CRC32C, kXR_pgread)"
	case p == protIntegrity:
		return "integrity (TLS)"
	}
	return "auth"
}
