package server

import (
	"fmt"
	"strings"

	"sitebox/internal/cksum"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// Version is reported by query config.
const Version = "sitebox-0.1"

func (s *session) doQuery(req *proto.Request) error {
	switch req.U16(0) {
	case proto.QueryCksum, proto.QueryCkscan:
		return s.queryChecksum(req)
	case proto.QueryConfig:
		return s.queryConfig(req)
	case proto.QuerySpace:
		return s.querySpace(req)
	}
	return errorf(proto.ErrUnsupported, "query type %d is not supported", req.U16(0))
}

// queryChecksum answers "<algo> <hex>". The algorithm comes from the
// cks.type CGI (adler32 by default, as XRootD).
func (s *session) queryChecksum(req *proto.Request) error {
	var path string
	algo := cksum.Default
	if len(req.Data) == 0 {
		of, err := s.files.get(req.Handle(4))
		if err != nil {
			return err
		}
		path = of.path
	} else {
		p, cgi, err := pathArg(req.Data)
		if err != nil {
			return err
		}
		path = p
		if t := cgi.Get("cks.type"); t != "" {
			algo = t
		}
	}
	algo, err := cksum.Normalize(algo)
	if err != nil {
		return err
	}
	sum, err := s.srv.store.Checksum(s.ctx, path, algo)
	if err != nil {
		return err
	}
	return s.sendString(req.Stream, algo+" "+sum)
}

// queryConfig answers each requested item on its own line; unknown items
// are echoed back, which is how XRootD says "not set".
func (s *session) queryConfig(req *proto.Request) error {
	cfg := s.srv.cfg
	var out []string
	for _, key := range strings.Fields(strings.TrimSuffix(string(req.Data), "\x00")) {
		v := key
		switch key {
		case "readv_iov_max":
			v = fmt.Sprint(proto.ReadvMaxElems)
		case "readv_ior_max":
			v = fmt.Sprint(proto.ReadvMaxElemLen)
		case "tpc", "tpcdlg":
			v = "0" // third-party copy is not offered
		case "pio_max":
			v = "5"
		case "chksum":
			v = "0:" + cksum.Adler32 + ",1:" + cksum.CRC32C
		case "version":
			v = Version
		case "role":
			v = "server"
		case "sitename":
			if cfg.Site != "" {
				v = cfg.Site
			}
		case "cms", "cid":
			v = cfg.ServerName
		case "bind_max":
			v = "0"
		case "csname":
			v = "0:" + cksum.Adler32 + ",1:" + cksum.CRC32C
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return errorf(proto.ErrArgMissing, "query config argument not specified")
	}
	return s.sendString(req.Stream, strings.Join(out, "\n"))
}

// querySpace answers in XRootD's oss.* CGI form.
func (s *session) querySpace(req *proto.Request) error {
	path, _, err := pathArg(req.Data)
	if err != nil {
		return err
	}
	sr, ok := s.srv.store.(store.SpaceReporter)
	if !ok {
		return errorf(proto.ErrUnsupported, "space query is not supported here")
	}
	sp, err := sr.Space(s.ctx, path)
	if err != nil {
		return err
	}
	return s.sendString(req.Stream, fmt.Sprintf("oss.cgroup=default&oss.space=%d&oss.free=%d&oss.maxf=%d&oss.used=%d&oss.quota=-1",
		sp.Total, sp.Free, sp.LargestFree, sp.Total-sp.Free))
}
