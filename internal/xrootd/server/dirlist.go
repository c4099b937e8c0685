package server

import (
	"bytes"
	"net"
	"strconv"
	"strings"

	"sitebox/internal/cksum"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// dirlistChunk is the size at which a listing is sent as a kXR_oksofar
// frame and continued; frames hold whole entries, as chunked listings
// are parsed frame by frame.
const dirlistChunk = 64 << 10

// dstatLead opens a kXR_dstat listing: a "." entry with a zero stat line,
// which tells the client stat information follows every name.
const dstatLead = ".\n0 0 0 0\n"

// doDirlist lists a directory: one name per line, or with kXR_dstat each
// name followed by its stat line, and with kXR_dcksm also its checksum
// ("[ adler32:hex ]", algorithm from the cks.type CGI). The last line ends
// with a NUL instead of a newline.
func (s *session) doDirlist(req *proto.Request) error {
	name, cgi, err := argPath(req.Data)
	if err != nil {
		return err
	}
	path := name.Path
	opts := req.Body[15]
	withStat := opts&(proto.DirlistDstat|proto.DirlistDcksm) != 0
	algo := ""
	if opts&proto.DirlistDcksm != 0 {
		if algo, err = cksum.Normalize(cgiValue(cgi, "cks.type")); err != nil {
			return err
		}
	}
	ctx := s.reqCtx(cgi)
	if err := name.Check(ctx, s.srv.store, "dirlist", store.Inspect); err != nil {
		return err
	}
	if done, err := s.routed(ctx, req, store.Call{Op: "list", Path: path}); done || err != nil {
		return err
	}
	entries, err := s.srv.store.List(ctx, path)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if withStat {
		b.WriteString(dstatLead)
	}
	for _, fi := range entries {
		if fi.Name == "" || fi.Name == "." || fi.Name == ".." || strings.ContainsAny(fi.Name, "\n\x00") {
			continue // a newline in a name would break the line format
		}
		if hiddenName(fi.Name) {
			continue // an upload in progress is not a file yet
		}
		if b.Len() >= dirlistChunk {
			if err := s.sendFrame(req.Stream, proto.StatusOKSoFar, b.Bytes()); err != nil {
				return err
			}
			b.Reset()
		}
		b.WriteString(fi.Name)
		b.WriteByte('\n')
		if !withStat {
			continue
		}
		b.Write(s.appendStat(b.AvailableBuffer(), fi))
		if algo != "" {
			sum := "none"
			if fi.Mode.IsRegular() {
				if v, err := store.Checksum(ctx, s.srv.store, joinPath(path, fi.Name), algo); err == nil {
					sum = v
				}
			}
			b.WriteString(" [ " + algo + ":" + sum + " ]")
		}
		b.WriteByte('\n')
	}
	out := b.Bytes()
	if len(out) == 0 {
		return s.sendOK(req.Stream, nil)
	}
	out[len(out)-1] = 0
	return s.sendOK(req.Stream, out)
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// cgiValue returns the value of key in an "a=b&c=d" opaque string.
func cgiValue(cgi, key string) string {
	for kv := range strings.SplitSeq(cgi, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// doLocate says where a path is: "Sr[::127.0.0.1]:1094"-style entries
// separated by spaces — 'S' a server ('M' a manager that redirects
// further), 'r' or 'w' its access — as XrdCl's LocationInfo parses them.
// A plain store answers with itself: the address the client reached.
// A leading '*' (all servers, as xrdfs ls asks) is accepted.
func (s *session) doLocate(req *proto.Request) error {
	data := bytes.TrimPrefix(req.Data, []byte{'*'})
	name, cgi, err := argPath(data)
	if err != nil {
		return err
	}
	path, ctx := name.Path, s.reqCtx(cgi)
	if err := name.Check(ctx, s.srv.store, "locate", store.Inspect); err != nil {
		return err
	}
	if done, err := s.routed(ctx, req, store.Call{Op: "locate", Path: path}); done || err != nil {
		return err
	}
	locs, err := store.Locate(ctx, s.srv.store, path)
	if err != nil {
		return err
	}
	if len(locs) == 0 {
		return errorf(proto.ErrNotFound, "locate %s: no server holds it", path)
	}
	parts := make([]string, 0, len(locs))
	for _, l := range locs {
		kind, access := "S", "r"
		if l.Manager {
			kind = "M"
		}
		if l.Writable && !s.srv.cfg.ReadOnly {
			access = "w"
		}
		ep := l.Endpoint
		if ep == "" {
			ep = selfEndpoint(s.conn.LocalAddr())
		}
		parts = append(parts, kind+access+ep)
	}
	return s.sendString(req.Stream, strings.Join(parts, " "))
}

// selfEndpoint formats the local address as XRootD does: IPv4 in its
// IPv6-mapped bracket form, "[::127.0.0.1]:1094".
func selfEndpoint(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	port := strconv.Itoa(ta.Port)
	if ip4 := ta.IP.To4(); ip4 != nil {
		return "[::" + ip4.String() + "]:" + port
	}
	return "[" + ta.IP.String() + "]:" + port
}
