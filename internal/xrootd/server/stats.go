package server

import (
	"encoding/xml"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"sitebox/internal/xrootd/proto"
)

// queryStats answers query stats (kXR_QStats) with an XML summary in the
// shape of xrootd's <statistics> report: who answers (info), its
// connections (link) and the process (proc). Monitoring scripts parse
// these three; the sections xrootd has for its own thread pools and
// buffer manager have no counterpart here and are left out.
func (s *session) queryStats(req *proto.Request) error {
	srv := s.srv
	srv.mu.Lock()
	conns := len(srv.sessions)
	var host, port string
	if srv.ln != nil {
		host, port, _ = net.SplitHostPort(srv.ln.Addr().String())
	}
	srv.mu.Unlock()
	now := time.Now()
	var b strings.Builder
	fmt.Fprintf(&b, `<statistics tod="%d" ver="%s" src="%s:%s" tos="%d" pgm="xrootd" ins="%s" pid="%d" site="%s">`,
		now.Unix(), versionString, esc(host), port, srv.started.Unix(), esc(srv.cfg.ServerName), os.Getpid(), esc(srv.cfg.Site))
	fmt.Fprintf(&b, `<stats id="info"><host>%s</host><port>%s</port><name>%s</name></stats>`, esc(host), port, esc(srv.cfg.ServerName))
	fmt.Fprintf(&b, `<stats id="link"><num>%d</num></stats>`, conns)
	fmt.Fprintf(&b, `<stats id="proc"><sys><s>%d</s></sys></stats>`, int64(now.Sub(srv.started).Seconds()))
	b.WriteString(`</statistics>`)
	return s.sendString(req.Stream, b.String())
}

func esc(v string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(v))
	return b.String()
}

// prepareIDs hands out the request ids of staging prepares (prepare -s),
// unique for this server's life as xrootd's are.
type prepareIDs struct {
	n atomic.Uint64
}

func (p *prepareIDs) next(srv *Server) string {
	return fmt.Sprintf("%x:%d.%d", srv.started.Unix(), os.Getpid(), p.n.Add(1))
}
