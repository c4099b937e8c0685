package server

import (
	"encoding/binary"
	"log/slog"
	"strings"

	"sitebox/internal/xrootd/proto"
)

// maxSetText bounds the application id or monitoring text a client may
// have logged, as xrootd cuts monitor info at 1024 bytes.
const maxSetText = 1024

// doSet answers kXR_set as xrootd 5.5 does: "appid <text>" is logged
// (once per session; again at debug level) and accepted; "monitor on|off [appid]" is accepted (this server sends no
// UDP monitoring stream, so there is nothing to switch); "monitor info
// <text>" is logged and answered with the 4-byte info id, 0 as from an
// xrootd without info monitoring. Anything else is refused with
// kXR_ArgInvalid. The XRootD Python bindings and ROOT send appid.
func (s *session) doSet(req *proto.Request) error {
	line, _, _ := strings.Cut(strings.TrimRight(string(req.Data), "\x00"), "\n")
	key, rest, _ := strings.Cut(strings.TrimLeft(line, " "), " ")
	rest = strings.TrimLeft(rest, " ")
	switch key {
	case "":
		return errorf(proto.ErrArgMissing, "set argument not specified.")
	case "appid":
		// Logged once per session at Info: a client repeating it must
		// not flood the log.
		lvl := slog.LevelDebug
		if !s.appidLogged.Swap(true) {
			lvl = slog.LevelInfo
		}
		s.log.Log(s.ctx, lvl, "set appid", "appid", clip(rest, maxSetText))
		return s.sendOK(req.Stream, nil)
	case "monitor":
		return s.setMonitor(req, rest)
	}
	return errorf(proto.ErrArgInvalid, "invalid set parameter %q (this server knows appid and monitor)", clip(key, 64))
}

// setMonitor serves "set monitor {on|off} [appid]" and "set monitor info
// [text]".
func (s *session) setMonitor(req *proto.Request, args string) error {
	what, text, _ := strings.Cut(args, " ")
	text = clip(strings.TrimLeft(text, " "), maxSetText)
	switch what {
	case "":
		return errorf(proto.ErrArgMissing, "set monitor argument not specified.")
	case "info":
		if text != "" {
			s.log.Debug("set monitor info", "info", text)
		}
		var seq [4]byte
		binary.BigEndian.PutUint32(seq[:], 0) // no info monitoring: xrootd's answer then
		return s.sendOK(req.Stream, seq[:])
	case "on", "off":
		if text != "" {
			s.log.Debug("set monitor", "state", what, "appid", text)
		}
		return s.sendOK(req.Stream, nil)
	}
	return errorf(proto.ErrArgInvalid, "invalid set monitor argument %q (want on, off or info)", clip(what, 64))
}

// clip cuts s to at most n bytes for a log line or an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
