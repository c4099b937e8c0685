package server

import (
	"fmt"
	"strconv"
	"strings"

	"sitebox/internal/cksum"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// versionString is what query config "version" answers: the XRootD
// release whose protocol sitebox speaks, marked as sitebox.
const versionString = "v5.5.3-sitebox"

// doQuery answers kXR_query for checksums, configuration, space,
// statistics and a path's attributes; other kinds are not supported.
func (s *session) doQuery(req *proto.Request) error {
	switch qt := req.U16(0); qt {
	case proto.QueryCksum:
		return s.queryChecksum(req)
	case proto.QueryConfig:
		return s.queryConfig(req)
	case proto.QuerySpace:
		return s.querySpace(req)
	case proto.QueryStats:
		return s.queryStats(req) // stats.go
	case proto.QueryXattr:
		return s.queryXattr(req) // fattr.go
	default:
		return errorf(proto.ErrUnsupported, "query type %d is not supported by this server", qt)
	}
}

// queryChecksum answers "<algo> <hex>", the algorithm named by the
// cks.type CGI or adler32 by default.
func (s *session) queryChecksum(req *proto.Request) error {
	name, cgi, err := argPath(req.Data)
	if err != nil {
		return err
	}
	path := name.Path
	algo, err := cksum.Normalize(cgiValue(cgi, "cks.type"))
	if err != nil {
		return errorf(proto.ErrUnsupported, "%s checksum not supported (this server computes %s)", cgiValue(cgi, "cks.type"), strings.Join(s.srv.cfg.Checksums.Names(), ", "))
	}
	ctx := s.reqCtx(cgi)
	if err := name.Check(ctx, s.srv.store, "checksum", store.Inspect); err != nil {
		return err
	}
	if done, err := s.routed(ctx, req, store.Call{Op: "checksum", Path: path}); done || err != nil {
		return err
	}
	sum, err := store.Checksum(ctx, s.srv.store, path, algo)
	if err != nil {
		return err
	}
	return s.sendString(req.Stream, algo+" "+sum)
}

// queryConfig answers each requested key on its own line, as XRootD does;
// keys it has no value for are echoed back, which clients read as "not
// configured".
func (s *session) queryConfig(req *proto.Request) error {
	line, _, _ := strings.Cut(strings.TrimRight(string(req.Data), "\x00"), "\n")
	keys := strings.Fields(line)
	if len(keys) == 0 {
		return errorf(proto.ErrArgMissing, "query config argument not specified")
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(s.configValue(k))
		b.WriteByte('\n')
	}
	return s.sendOK(req.Stream, []byte(b.String()))
}

func (s *session) configValue(key string) string {
	cfg := &s.srv.cfg
	switch key {
	case "bind_max":
		return strconv.Itoa(cfg.Limits.SubstreamsPerSession) // bind.go
	case "fattr":
		// The longest attribute name and value (kXR_fattr), as xrootd
		// announces them; "0 0" would say attributes are not supported.
		return strconv.Itoa(store.MaxAttrNameLen) + " " + strconv.Itoa(store.MaxAttrValueLen)
	case "chksum":
		// "0:adler32,1:crc32c[,2:md5]", the default first, as xrootd
		// lists its xrootd.chksum algorithms.
		var b strings.Builder
		for i, a := range cfg.Checksums.Names() {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(i) + ":" + a)
		}
		return b.String()
	case "pio_max":
		return strconv.Itoa(maxPio)
	case "readv_ior_max":
		return strconv.Itoa(cfg.MaxReadChunk - proto.ReadvElemLen)
	case "readv_iov_max":
		return strconv.Itoa(proto.ReadvMaxElems)
	case "role":
		return "server"
	case "sitename":
		return cfg.Site
	case "start":
		return s.srv.started.Format("060102 15:04")
	case "tpc":
		return s.tpcConfig()
	case "version":
		return versionString
	case "cms", "xrootd":
		return ""
	}
	return key // tpcdlg, window, cid, sysid, vnid: not configured
}

// querySpace answers in XRootD's oss format for the space holding path.
func (s *session) querySpace(req *proto.Request) error {
	name, cgi, err := argPath(req.Data)
	if err != nil {
		return err
	}
	path := name.Path // of the space holding it, as XRootD: "/" or not
	sr, ok := store.As[store.SpaceReporter](s.srv.store)
	if !ok {
		return fmt.Errorf("query space %s: %w", path, store.ErrUnsupported)
	}
	ctx := s.reqCtx(cgi)
	if done, err := s.routed(ctx, req, store.Call{Op: "space", Path: path}); done || err != nil {
		return err
	}
	sp, err := sr.Space(ctx, path)
	if err != nil {
		return err
	}
	return s.sendString(req.Stream, fmt.Sprintf("oss.cgroup=public&oss.space=%d&oss.free=%d&oss.maxf=%d&oss.used=%d&oss.quota=-1",
		sp.Total, sp.Free, sp.LargestFree, sp.Total-sp.Free))
}
