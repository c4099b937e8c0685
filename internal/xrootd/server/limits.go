package server

import (
	"fmt"

	"sitebox/internal/clientnet"
	"sitebox/internal/xrootd/proto"
)

// Limits bound what one client address, one client network (IPv4 /24,
// IPv6 /64), one session and all clients together may hold, so that a
// handful of connections cannot take the server's descriptors from
// everyone else. Zero fields take the defaults noted; a negative field
// means no limit. Where the process may open fewer descriptors than the
// default totals need, they shrink to fit: sessions to an eighth, open
// files to half of them.
//
// A limit on sessions reached by sessions that hold nothing does not
// lock a new client out, nor does a limit on open files reached by
// sessions silent for the idle timeout with only files open for reading:
// the server closes the one of them silent longest (reclaim.go) and lets
// the newcomer in.
//
// [root] in the config file holds them (Settings embeds Limits), under
// the keys their tags give.
type Limits struct {
	// Sessions bounds the connections of all clients together (default
	// 4096: with OpenFiles, well under a common descriptor limit of 65536).
	Sessions int `toml:"max_sessions"`
	// SessionsPerClient bounds the connections from one address (default
	// an eighth of Sessions, at most 512). XrdCl shares one connection per
	// server among all the files a process opens, but every job on a
	// batch farm behind NAT arrives from the same address.
	SessionsPerClient int `toml:"max_sessions_per_client"`
	// SessionsPerNetwork bounds the connections from one network (default
	// a quarter of Sessions, at most 1024, and no less than
	// SessionsPerClient; no limit when SessionsPerClient has none).
	SessionsPerNetwork int `toml:"max_sessions_per_network"`
	// OpenFiles bounds the files open by all sessions together (default
	// 32768).
	OpenFiles int `toml:"max_open_files"`
	// OpenFilesPerClient bounds the files open by the sessions of one
	// address (default an eighth of OpenFiles, at most 4096).
	OpenFilesPerClient int `toml:"max_open_files_per_client"`
	// OpenFilesPerNetwork bounds the files open by the sessions of one
	// network (default a quarter of OpenFiles, at most 8192, and no less
	// than OpenFilesPerClient; no limit when OpenFilesPerClient has none).
	OpenFilesPerNetwork int `toml:"max_open_files_per_network"`
	// OpenFilesPerSession bounds one session's file table (default 1024; a
	// ROOT job rarely keeps more than a few dozen files open).
	OpenFilesPerSession int `toml:"max_open_files_per_session"`
	// SubstreamsPerSession bounds the connections a session may bind to
	// itself with kXR_bind for parallel data streams (`xrdcp -S N`):
	// default and most 15, as xrootd; negative is the protocol's 15.
	// Each substream is a session for the limits above, too.
	SubstreamsPerSession int `toml:"max_substreams_per_session"`
}

func (l *Limits) defaults() { l.defaultsFor(descriptorLimit()) }

// defaultsFor fills the defaults for a process that may open fds
// descriptors (0: unknown).
func (l *Limits) defaultsFor(fds int) {
	sessions, files := 4096, 32768
	if fds > 0 {
		sessions, files = max(min(sessions, fds/8), 1), max(min(files, fds/2), 1)
	}
	setDefault(&l.Sessions, sessions)
	setDefault(&l.OpenFiles, files)
	// No address may take more than an eighth of a total, no network more
	// than a quarter: a few clients cannot take it all.
	setDefault(&l.SessionsPerClient, share(l.Sessions, 8, 512))
	setDefault(&l.SessionsPerNetwork, networkShare(l.Sessions, l.SessionsPerClient, 1024))
	setDefault(&l.OpenFilesPerClient, share(l.OpenFiles, 8, 4096))
	setDefault(&l.OpenFilesPerNetwork, networkShare(l.OpenFiles, l.OpenFilesPerClient, 8192))
	setDefault(&l.OpenFilesPerSession, share(l.OpenFiles, 1, 1024))
	if l.SubstreamsPerSession <= 0 || l.SubstreamsPerSession > maxSubstreams {
		l.SubstreamsPerSession = maxSubstreams
	}
}

func setDefault(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}

// share is 1/div of total, at least 1 and at most most (most when total
// has no limit).
func share(total, div, most int) int {
	if total < 0 {
		return most
	}
	return max(min(most, total/div), 1)
}

// networkShare is a network's default: a quarter of total, at most most,
// but never less than what one address of it may hold, and no limit when
// an address has none (an operator who lifted the one meant the other).
func networkShare(total, perClient, most int) int {
	if perClient < 0 {
		return -1
	}
	return max(share(total, 4, most), perClient)
}

// exceeds reports whether n more than held reaches past limit (negative:
// unlimited).
func exceeds(held, limit int) bool { return limit >= 0 && held >= limit }

// scopeKind is where a limit applies.
type scopeKind int

const (
	scopeAddress scopeKind = iota
	scopeNetwork
	scopeServer
	scopeSession
)

// limitScope is where one limit applies: an address, a network, the
// server or one session.
type limitScope struct {
	kind scopeKind
	key  string // the address or network
}

var (
	onServer  = limitScope{kind: scopeServer}
	inSession = limitScope{kind: scopeSession}
)

func fromAddress(addr string) limitScope { return limitScope{scopeAddress, addr} }
func fromNetwork(addr string) limitScope { return limitScope{scopeNetwork, clientnet.Of(addr)} }

func (s limitScope) String() string {
	switch s.kind {
	case scopeAddress:
		return "from " + s.key
	case scopeNetwork:
		return "from network " + s.key
	case scopeSession:
		return "in this session"
	}
	return "on this server"
}

// label names the limit for metrics: "sessions_per_client" and so on.
func (s limitScope) label(what string) string {
	base := map[string]string{whatSessions: "sessions", whatFiles: "open_files", whatGrants: "tpc_grants"}[what]
	switch s.kind {
	case scopeAddress:
		return base + "_per_client"
	case scopeNetwork:
		return base + "_per_network"
	case scopeSession:
		return base + "_per_session"
	}
	return base
}

// What a limit counts.
const (
	whatSessions = "sessions"
	whatFiles    = "open files"
	whatGrants   = "third-party copy grants"
)

// limitError is the refusal of a session or an open past a limit. Its
// message names the limit; its code is kXR_Overloaded, which XRootD
// answers for "too many users" (EUSERS), so the client may come back later
// or go to another server — except for a session's own file table, which
// XRootD refuses with kXR_NoMemory, as nothing but the client's own closes
// can help there.
type limitError struct {
	what  string // whatSessions, whatFiles, whatGrants
	scope limitScope
	limit int
}

func (e *limitError) Error() string {
	return fmt.Sprintf("too many %s %s (limit %d); close some and retry later", e.what, e.scope, e.limit)
}

func (e *limitError) code() int32 {
	if e.scope.kind == scopeSession {
		return proto.ErrNoMemory
	}
	return proto.ErrOverloaded
}
