package server

import (
	"fmt"
	"io/fs"
	"os/user"
	"strings"
	"sync"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// owner names shown in stat answers: the account the server runs as,
// which owns everything it writes.
var owner = sync.OnceValues(func() (string, string) {
	u, err := user.Current()
	if err != nil {
		return "sitebox", "sitebox"
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		return u.Username, u.Gid
	}
	return u.Username, g.Name
})

// statFlags computes XRootD's kXR_* stat flags.
func statFlags(fi store.FileInfo) int {
	flags := 0
	perm := fi.Mode.Perm()
	if perm&0o444 != 0 {
		flags |= proto.StatFlagReadable
	}
	if fi.Writable && perm&0o222 != 0 {
		flags |= proto.StatFlagWritable
	}
	if perm&0o111 != 0 {
		flags |= proto.StatFlagXset
	}
	switch {
	case fi.IsDir():
		flags |= proto.StatFlagIsDir
	case !fi.Mode.IsRegular():
		flags |= proto.StatFlagOther
	}
	return flags
}

// statString renders the extended stat answer XRootD 5 sends:
// "id size flags mtime ctime atime mode owner group". A zero id means
// "offline" to clients, so it is never sent.
func statString(fi store.FileInfo) string {
	id := fi.ID
	if id == 0 {
		id = 1
	}
	mt := fi.ModTime.Unix()
	u, g := owner()
	return fmt.Sprintf("%d %d %d %d %d %d %04o %s %s", int64(id&(1<<63-1)), fi.Size, statFlags(fi), mt, mt, mt, uint32(fi.Mode.Perm()), u, g)
}

func (s *session) doStat(req *proto.Request) error {
	var fi store.FileInfo
	var path string
	if len(req.Data) == 0 {
		of, err := s.files.get(req.Handle(12))
		if err != nil {
			return err
		}
		if fi, err = of.f.Stat(); err != nil {
			return err
		}
		path = of.path
	} else {
		var err error
		if path, _, err = pathArg(req.Data); err != nil {
			return err
		}
		if req.Body[0]&proto.StatVFS == 0 {
			if fi, err = s.srv.store.Stat(s.ctx, path); err != nil {
				return err
			}
		}
	}
	if req.Body[0]&proto.StatVFS != 0 {
		return s.statVFS(req, path)
	}
	return s.sendString(req.Stream, statString(fi))
}

// statVFS answers "nodesRW freeMB utilPct nodesStage freeMB utilPct".
func (s *session) statVFS(req *proto.Request, path string) error {
	sr, ok := s.srv.store.(store.SpaceReporter)
	if !ok {
		return s.sendString(req.Stream, "0 0 0 0 0 0")
	}
	sp, err := sr.Space(s.ctx, path)
	if err != nil {
		return err
	}
	util := 0
	if sp.Total > 0 {
		util = int(100 * (sp.Total - sp.Free) / sp.Total)
	}
	return s.sendString(req.Stream, fmt.Sprintf("1 %d %d 0 0 0", sp.Free>>20, util))
}

// doStatx answers one flag byte per newline-separated path.
func (s *session) doStatx(req *proto.Request) error {
	paths := strings.Split(strings.TrimRight(string(req.Data), "\x00\n"), "\n")
	out := make([]byte, 0, len(paths))
	for _, p := range paths {
		path, _, err := pathArg([]byte(p))
		if err != nil {
			return err
		}
		fi, err := s.srv.store.Stat(s.ctx, path)
		if err != nil {
			out = append(out, proto.StatFlagOffline)
			continue
		}
		out = append(out, byte(statFlags(fi)))
	}
	return s.sendOK(req.Stream, out)
}

// dirlistChunk bounds one dirlist frame; bigger listings use kXR_oksofar.
const dirlistChunk = 64 << 10

// doDirlist lists a directory. With kXR_dstat each name is followed by its
// stat line, and the answer starts with the ".\n0 0 0 0\n" entry XRootD
// clients use to recognise the stat form.
func (s *session) doDirlist(req *proto.Request) error {
	path, _, err := pathArg(req.Data)
	if err != nil {
		return err
	}
	entries, err := s.srv.store.List(s.ctx, path)
	if err != nil {
		return err
	}
	withStat := req.Body[15]&(proto.DirlistDstat|proto.DirlistDcksm) != 0
	var b strings.Builder
	if withStat {
		b.WriteString(".\n0 0 0 0\n")
	}
	for _, e := range entries {
		if e.Name == "" || strings.ContainsAny(e.Name, "\n\x00") {
			continue // unrepresentable in this protocol
		}
		if b.Len() > dirlistChunk {
			if err := s.sendFrame(req.Stream, proto.StatusOKSoFar, []byte(b.String())); err != nil {
				return nil
			}
			b.Reset()
		}
		b.WriteString(e.Name)
		b.WriteByte('\n')
		if withStat {
			b.WriteString(statString(e))
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		return s.sendOK(req.Stream, nil)
	}
	out := []byte(b.String())
	out[len(out)-1] = 0 // the last newline becomes the terminating NUL
	return s.sendOK(req.Stream, out)
}

// doLocate answers that this server holds the file: "Sr" or "Sw" followed
// by the address the client reached us on.
func (s *session) doLocate(req *proto.Request) error {
	raw := strings.TrimSuffix(string(req.Data), "\x00")
	raw = strings.TrimPrefix(raw, "*") // "*path": any server, including managers
	path, _, err := pathArg([]byte(raw))
	if err != nil {
		return err
	}
	locs, err := s.srv.store.Locate(s.ctx, path)
	if err != nil {
		return err
	}
	var parts []string
	for _, l := range locs {
		kind, access := "S", "r"
		if l.Manager {
			kind = "M"
		}
		if l.Writable && !s.srv.cfg.ReadOnly {
			access = "w"
		}
		addr := l.Endpoint
		if addr == "" {
			addr = s.conn.LocalAddr().String()
		}
		parts = append(parts, kind+access+addr)
	}
	return s.sendString(req.Stream, strings.Join(parts, " "))
}

func modeArg(m uint16) fs.FileMode { return fs.FileMode(m) & fs.ModePerm }
