package server

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/tpc"
	"sitebox/internal/xrootd/proto"
)

// root:// third-party copy, as XRootD's ofs layer does it (xrdcp --tpc):
//
//  1. the client opens the destination for writing with
//     tpc.key=K&tpc.src=[user@]host:port&tpc.lfn=/path&tpc.stage=copy;
//  2. its first kXR_sync on that handle is the rendezvous;
//  3. it opens the source for reading with tpc.key=K&tpc.dst=desthost,
//     which grants the destination the right to read that file with K,
//     once, while the client keeps it open (tpcgrants.go);
//  4. its second kXR_sync makes the destination open the source with
//     tpc.key=K&tpc.org=user.pid@clienthost and pull the file; the sync
//     answers when the copy has ended, and kXR_stat on the handle shows
//     progress meanwhile.
//
// The destination writes into a hidden temporary renamed into place only
// after a complete, checksum-verified copy (tpc.LocalSink), so a refused
// or failed copy leaves nothing under the final name.

// tpcWaitGrant bounds how long a destination's open waits for the client
// to make its grant (step 3 may race step 4's open).
const tpcWaitGrant = 5 * time.Second

// maxTPCKey bounds a tpc.key (xrdcp's are 24 hex digits).
const maxTPCKey = 128

// tpcCGI returns the tpc.* keys of an open's CGI, nil if there are none.
func tpcCGI(cgi string) url.Values {
	if !strings.Contains(cgi, "tpc.") {
		return nil
	}
	q, err := url.ParseQuery(cgi)
	if err != nil || q.Get("tpc.key") == "" {
		return nil
	}
	return q
}

// pendingGrant is the grant an open with tpc.dst asks for, made once the
// open has succeeded (tpcgrants.go).
type pendingGrant struct {
	key   string
	grant *tpcGrant
}

// openTPC handles the tpc.* CGI of an open. handled is true when the
// open was answered here (a destination's); otherwise the open goes on
// as usual with the returned context once err is nil (a source's, steps
// 3 and 4: a granted destination reads as the client that granted it),
// making the returned grant if it succeeds. A grant is for reading only.
func (s *session) openTPC(ctx context.Context, req *proto.Request, path string, q url.Values, write bool) (context.Context, *pendingGrant, bool, error) {
	key := q.Get("tpc.key")
	if len(key) > maxTPCKey {
		return ctx, nil, false, errorf(proto.ErrArgTooLong, "open %s: tpc.key longer than %d bytes", path, maxTPCKey)
	}
	switch {
	case q.Get("tpc.src") != "":
		return ctx, nil, true, s.openTPCDest(ctx, req, path, q)
	case write && (q.Get("tpc.org") != "" || q.Get("tpc.dst") != ""):
		return ctx, nil, false, errorf(proto.ErrNotAuthorized, "open %s: a third-party copy source is opened for reading only", path)
	case q.Get("tpc.org") != "":
		who, err := s.checkTPCGrant(ctx, path, key, q.Get("tpc.org"))
		if err != nil {
			return ctx, nil, false, err
		}
		r := *store.RequestFrom(ctx)
		r.Identity, r.AuthError = who, nil
		return store.WithRequest(ctx, &r), nil, false, nil
	case q.Get("tpc.dst") != "":
		// The grant carries the client's identity, so the destination can
		// read no more than the client could.
		gr := &tpcGrant{who: store.RequestFrom(ctx).Identity, path: path, org: s.login,
			dst: q.Get("tpc.dst"), expires: time.Now().Add(tpcTTL), addr: s.clientIP}
		return ctx, &pendingGrant{key: key, grant: gr}, false, nil
	}
	return ctx, nil, false, errorf(proto.ErrArgInvalid, "open %s: tpc.key needs tpc.src, tpc.dst or tpc.org", path)
}

// grantTPC makes the grant p for the file of, open for the client, which
// it lasts as long as (at most tpcTTL).
func (s *session) grantTPC(of *openFile, p *pendingGrant) error {
	err := s.srv.tpc.add(p.key, p.grant)
	s.log.Debug("tpc grant", "path", of.path, "dst", p.grant.dst, "err", err)
	if le := (*limitError)(nil); errors.As(err, &le) {
		s.srv.limits.refuse(s.clientIP, le)
	}
	if err != nil {
		return err
	}
	of.withdraw = func() { s.srv.tpc.withdraw(p.key, p.grant) }
	return nil
}

// checkTPCGrant lets a destination read path only with a key the client
// granted for it, from the host the client named, and only once; it
// returns the granting client's identity.
func (s *session) checkTPCGrant(ctx context.Context, path, key, org string) (*store.Identity, error) {
	deadline := time.Now().Add(tpcWaitGrant)
	for {
		if gr := s.srv.tpc.lookup(key); gr != nil {
			user, _, _ := strings.Cut(org, "@")
			if gr.path != path || (gr.org != "" && user != gr.org) {
				return nil, errorf(proto.ErrNotAuthorized, "open %s: tpc.key was granted for another file or client", path)
			}
			if !hostIs(ctx, gr.dst, s.clientIP) {
				return nil, errorf(proto.ErrNotAuthorized, "open %s: tpc granted to %s, not to this host", path, gr.dst)
			}
			if !s.srv.tpc.take(key, gr) {
				return nil, errorf(proto.ErrNotAuthorized, "open %s: the tpc grant for this key was used already", path)
			}
			return gr.who, nil
		}
		if time.Now().After(deadline) {
			return nil, errorf(proto.ErrNotAuthorized, "open %s: no tpc grant for this key (a grant is used once, and ends when the client closes the source or after %v)", path, tpcTTL)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// hostIs reports whether name resolves to ip.
func hostIs(ctx context.Context, name, ip string) bool {
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if n := net.ParseIP(name); n != nil {
		return n.Equal(net.ParseIP(ip))
	}
	addrs, err := net.DefaultResolver.LookupHost(ctx, name)
	if err != nil {
		return false
	}
	want := net.ParseIP(ip)
	for _, a := range addrs {
		if net.ParseIP(a).Equal(want) {
			return true
		}
	}
	return false
}

// org is the client as the source identifies it: user.pid@host, with
// host as XRootD names it — the fully qualified name when the address
// has one, else the address in XRootD's bracketed IPv6 form (what an
// xrootd with "xrd.network nodnr", or a host without reverse DNS, uses).
// A source compares it with its own view of the client, so a source that
// resolves names differently refuses the copy.
func (s *session) org(ctx context.Context) string {
	if names, err := net.DefaultResolver.LookupAddr(ctx, s.clientIP); err == nil && len(names) > 0 {
		if name := strings.TrimSuffix(names[0], "."); strings.Contains(name, ".") {
			return s.login + "@" + name
		}
	}
	ip := net.ParseIP(s.clientIP)
	if ip == nil {
		return s.login + "@" + s.clientIP
	}
	if ip4 := ip.To4(); ip4 != nil {
		return s.login + "@[::ffff:" + ip4.String() + "]"
	}
	return s.login + "@[" + ip.String() + "]"
}

// tpcSourceScheme is how the destination reaches the source: over TLS
// when the client reached the source so (tpc.spr, the source URL's
// protocol, which XrdCl sends), else plain root://. xrootd 5.5 honours
// only "xroots"; XrdCl sends "roots" for roots:// URLs, which a box
// honours too.
func tpcSourceScheme(spr string) string {
	switch spr {
	case "roots", "xroots":
		return "roots"
	}
	return "root"
}

// openTPCDest opens a destination: the temporary is created now, so
// rights and space are checked at open as for any upload, but nothing
// appears under path until the copy succeeds.
func (s *session) openTPCDest(ctx context.Context, req *proto.Request, path string, q url.Values) error {
	if s.srv.cfg.ReadOnly {
		return errReadOnly("tpc into", path)
	}
	lfn := q.Get("tpc.lfn")
	if lfn == "" {
		lfn = path
	}
	if s.srv.cfg.TPC == nil {
		return errorf(proto.ErrUnsupported, "open %s: third-party copy is not enabled on this server", path)
	}
	src, err := s.srv.cfg.TPC.Parse(tpcSourceScheme(q.Get("tpc.spr")) + "://" + q.Get("tpc.src") + "/" + lfn)
	if errors.Is(err, store.ErrPermission) {
		s.log.Warn("tpc refused", "path", path, "source", q.Get("tpc.src"), "err", err)
		return errorf(proto.ErrNotAuthorized, "open %s: %v", path, err)
	}
	if err != nil {
		return errorf(proto.ErrArgInvalid, "open %s: bad tpc.src or tpc.lfn: %v", path, err)
	}
	opts := req.U16(2)
	release, err := s.reserveFile()
	if err != nil {
		return err
	}
	// The guard judges the target with the source's connection too: a
	// protected namespace takes no data over plain root://.
	sink, _, err := tpc.LocalSink(tpc.WithPeer(ctx, src), s.srv.store, path, tpc.SinkOptions{Overwrite: opts&proto.OpenDelete != 0, MkParents: true, Owner: s}, s.log)
	if err != nil {
		release()
		return err
	}
	of := newOpenFile(path, sink.File, sink.File, store.RequestFrom(ctx))
	of.tpc = &tpcDest{src: src, sink: sink,
		// XRootD reads CGI values verbatim (no %-decoding): the org's "@"
		// goes as is; the key and org must hold no "&".
		opaque: "tpc.key=" + cgiSafe(q.Get("tpc.key")) + "&tpc.org=" + cgiSafe(s.org(ctx))}
	h, err := s.files.add(of)
	if err != nil {
		sink.Abort(context.WithoutCancel(ctx))
		release()
		return err
	}
	s.log.Debug("tpc destination open", "path", path, "source", src.Host+src.Path)
	if opts&proto.OpenRetstat == 0 {
		return s.sendOK(req.Stream, h[:])
	}
	var head [12]byte
	copy(head[:4], h[:])
	return s.sendFrame(req.Stream, proto.StatusOK, head[:], []byte(s.statLine(store.FileInfo{Mode: 0o644})), []byte{0})
}

// syncTPC answers a sync on a destination handle: the first is the
// rendezvous, the next runs the copy and answers when it ended.
func (s *session) syncTPC(req *proto.Request, of *openFile) error {
	d := of.tpc
	d.mu.Lock()
	if !d.synced {
		d.synced = true
		d.mu.Unlock()
		return s.sendOK(req.Stream, nil)
	}
	if d.started {
		d.mu.Unlock()
		return errorf(proto.ErrInvalidRequest, "sync %s: the copy already ran", of.path)
	}
	d.started = true
	d.mu.Unlock()

	ctx := s.reqCtx("")
	start := time.Now()
	err := s.runTPC(ctx, of)
	d.mu.Lock()
	d.finished, d.err = true, err
	d.mu.Unlock()
	if err != nil {
		s.log.Warn("tpc failed", "path", of.path, "source", d.src.Host+d.src.Path, "err", err)
		code := int32(proto.ErrIOError)
		if errors.Is(err, tpc.ErrBuffersFull) {
			code = proto.ErrOverloaded // the box's [tpc] buffer_memory: a later try may run
		}
		return errorf(code, "tpc %s from %s: %v", of.path, d.src.Host+d.src.Path, err)
	}
	s.log.Info("tpc done", "path", of.path, "source", d.src.Host+d.src.Path, "seconds", time.Since(start).Seconds())
	return s.sendOK(req.Stream, nil)
}

func (s *session) runTPC(ctx context.Context, of *openFile) error {
	d := of.tpc
	source, err := s.srv.cfg.TPC.Source(ctx, d.src, d.opaque, "")
	if err != nil {
		d.sink.Abort(context.WithoutCancel(ctx))
		return err
	}
	job := &tpc.Job{Src: source, Dst: d.sink, Streams: 4, Buffers: s.srv.cfg.CopyBuffers, Log: s.log}
	d.mu.Lock()
	d.job = job
	d.mu.Unlock()
	return job.Run(ctx)
}

// closeTPC closes a destination handle; a copy that never ran is
// discarded with its temporary.
func (s *session) closeTPC(req *proto.Request, of *openFile) error {
	err := of.tpc.abandon(s.ctx)
	s.srv.limits.dropFile(s.clientIP)
	if err != nil {
		return errorf(proto.ErrIOError, "close %s: the copy failed: %v", of.path, err)
	}
	return s.sendOK(req.Stream, nil)
}

// tpcConfig is what query config answers for "tpc": 1 when this server
// can be the destination (and the source) of a root:// third-party copy,
// else the key itself, as for every setting that is not configured.
func (s *session) tpcConfig() string {
	if s.srv.cfg.TPC == nil {
		return "tpc"
	}
	return strconv.Itoa(1)
}

// cgiSafe drops the characters that would end a CGI value or the path.
func cgiSafe(v string) string {
	return strings.Map(func(r rune) rune {
		if r == '&' || r == '?' || r == '=' || r <= ' ' || r == 0x7f {
			return -1
		}
		return r
	}, v)
}
