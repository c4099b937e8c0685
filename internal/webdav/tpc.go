package webdav

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/tpc"
)

// markerEvery is how often a running third-party copy reports progress;
// XrdHttp and dCache send a marker every few seconds and FTS declares a
// transfer stalled after a minute or so without one.
const markerEvery = 5 * time.Second

// copyFile answers COPY, which WLCG HTTP-TPC overloads:
//   - Source: <url>       pull: this server fetches url into name;
//   - Destination: <url>  push, when url is another server: this server
//     sends name there;
//   - Destination: <path or url on this server>  RFC 4918 COPY here.
//
// A third-party copy answers 202 at once and streams performance markers
// in the body, then "success: …" or "failure: …" (the format XrdHttpTPC
// and dCache use and gfal2/davix/FTS parse). Everything that can be
// refused before data moves (bad headers, rights on either side, a
// missing source) gets an ordinary error status instead.
func (h *Handler) copyFile(w http.ResponseWriter, r *http.Request, name string) error {
	overwrite, err := overwriteHeader(r)
	if err != nil {
		return err
	}
	if src := strings.TrimSpace(r.Header.Get("Source")); src != "" {
		// A pull writes name: a director sends it where an upload goes.
		call := store.Call{Op: "create", Path: name, Create: store.CreateOptions{Truncate: true, MkParents: true}}
		if answered, err := h.route(w, r, call); answered || err != nil {
			return err
		}
		return h.tpcPull(w, r, name, src, overwrite)
	}
	dest := strings.TrimSpace(r.Header.Get("Destination"))
	if dest == "" {
		return badRequest("COPY needs a Source (pull) or Destination header")
	}
	if answered, err := h.route(w, r, store.Call{Op: "copy", Path: name}); answered || err != nil {
		return err
	}
	if u, err := url.Parse(dest); err == nil && !h.destHere(r, u) {
		return h.tpcPush(w, r, name, dest)
	}
	return h.localCopy(w, r, name, overwrite)
}

// overwriteHeader reads RFC 4918's Overwrite (default T).
func overwriteHeader(r *http.Request) (bool, error) {
	switch strings.ToUpper(strings.TrimSpace(r.Header.Get("Overwrite"))) {
	case "", "T":
		return true, nil
	case "F":
		return false, nil
	}
	return false, badRequest("Overwrite header must be T or F")
}

// tpcOptions reads the headers every third-party copy shares: the
// credential mode, the stream count and the headers for the remote server.
func tpcOptions(r *http.Request) (token string, streams int, err error) {
	// Credential asks for delegation ("gridsite", "oidc"); gfal2 sends
	// "gridsite" whenever it has no token. Like XrdHttpTPC without
	// credential forwarding, the remote side is reached with the
	// TransferHeaderAuthorization token or anonymously: nothing is
	// delegated, and a remote server that needs more refuses, which the
	// marker stream reports.
	streams = 1
	if s := strings.TrimSpace(r.Header.Get("X-Number-Of-Streams")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > tpc.MaxStreams {
			return "", 0, badRequest(fmt.Sprintf("X-Number-Of-Streams must be 0 to %d", tpc.MaxStreams))
		}
		streams = max(n, 1) // gfal2 sends 0 for "the server's choice"
	}
	for k, v := range r.Header {
		fwd, ok := strings.CutPrefix(k, "Transferheader")
		if !ok || len(v) == 0 {
			continue
		}
		if strings.EqualFold(fwd, "Authorization") {
			tok := strings.TrimSpace(v[0])
			if t, ok := cutBearer(tok); ok {
				tok = t
			}
			token = tok
		}
		// Other TransferHeader* headers have no counterpart in the remote
		// client and are not sent; see docs/webdav.md.
	}
	return token, streams, nil
}

func cutBearer(s string) (string, bool) {
	if len(s) > 7 && strings.EqualFold(s[:7], "bearer ") {
		return strings.TrimSpace(s[7:]), true
	}
	return s, false
}

// remoteURL parses the other server's URL of a third-party copy. A
// server given no tpc.Remote takes no copies: 400, from which gfal2
// falls back to streaming.
func (h *Handler) remoteURL(header, raw string) (tpc.Where, error) {
	if h.cfg.TPC == nil {
		return tpc.Where{}, badRequest("third-party copy is not enabled on this server; send the data with PUT")
	}
	w, err := h.cfg.TPC.Parse(raw)
	if errors.Is(err, store.ErrPermission) {
		return tpc.Where{}, fmt.Errorf("%s: %w", header, err) // the site's [tpc] allow: 403
	}
	if err != nil {
		return tpc.Where{}, badRequest(header + ": " + err.Error())
	}
	return w, nil
}

// tpcPull fetches src into name.
func (h *Handler) tpcPull(w http.ResponseWriter, r *http.Request, name, src string, overwrite bool) error {
	if h.cfg.ReadOnly {
		return &store.PathError{Op: "copy", Path: name, Err: store.ErrReadOnly}
	}
	if _, ok := store.As[store.Namespace](h.store); !ok {
		// A store that cannot rename (a director, a cache) cannot take a
		// copy; 400, not 405 or 501: gfal2 then falls back to streaming.
		return badRequest("third-party copy into " + name + " is not supported by this server; send the data with PUT")
	}
	u, err := h.remoteURL("Source", src)
	if err != nil {
		return err
	}
	token, streams, err := tpcOptions(r)
	if err != nil {
		return err
	}
	// The guard judges the target with the source's connection too: a
	// protected namespace takes no data over a plain one.
	r = r.WithContext(tpc.WithPeer(r.Context(), u))
	ctx := r.Context()
	sink, _, err := tpc.LocalSink(ctx, h.store, name, tpc.SinkOptions{Overwrite: overwrite, MkParents: true}, h.log)
	if err != nil {
		return err
	}
	source, err := h.cfg.TPC.Source(ctx, u, "", token)
	if err != nil {
		sink.Abort(context.WithoutCancel(ctx))
		return err
	}
	job := &tpc.Job{Src: source, Dst: sink, Streams: streams, Buffers: h.cfg.CopyBuffers, Log: h.log}
	h.runTPC(w, r, job, "pull", name, u)
	return nil
}

// tpcPush sends name to dest.
func (h *Handler) tpcPush(w http.ResponseWriter, r *http.Request, name, dest string) error {
	u, err := h.remoteURL("Destination", dest)
	if err != nil {
		return err
	}
	token, _, err := tpcOptions(r)
	if err != nil {
		return err
	}
	// The guard judges the source with the destination's connection too
	// (not the client's, which carries no data): a protected namespace
	// sends nothing over a plain one.
	r = r.WithContext(tpc.WithPeer(r.Context(), u))
	ctx := r.Context()
	source, err := tpc.LocalSource(ctx, h.store, name)
	if err != nil {
		return err
	}
	sink, err := h.cfg.TPC.Sink(ctx, u, token, source.Size)
	if err != nil {
		source.Close()
		return err
	}
	job := &tpc.Job{Src: source, Dst: sink, Buffers: h.cfg.CopyBuffers, Log: h.log}
	h.runTPC(w, r, job, "push", name, u)
	return nil
}

// runTPC answers 202 and runs job, with a performance marker every
// markerEvery and the outcome as the last line.
func (h *Handler) runTPC(w http.ResponseWriter, r *http.Request, job *tpc.Job, dir, name string, u tpc.Where) {
	log := h.log.With("tpc", dir, "path", name, "remote", u.String())
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusAccepted)
	rc := http.NewResponseController(w)
	rc.Flush()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- job.Run(r.Context()) }()
	tick := time.NewTicker(markerEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			fmt.Fprintf(w, "Perf Marker\nTimestamp: %d\nStripe Index: 0\nStripe Bytes Transferred: %d\nTotal Stripe Count: 1\nEnd\n",
				time.Now().Unix(), job.Moved())
			rc.Flush()
		case err := <-done:
			if err != nil {
				log.Warn("third-party copy failed", "bytes", job.Moved(), "err", err)
				fmt.Fprintf(w, "failure: %s\n", oneLine(err.Error()))
			} else {
				log.Info("third-party copy done", "bytes", job.Moved(), "seconds", time.Since(start).Seconds())
				if dir == "pull" {
					h.received(r, name, job.Moved())
				}
				fmt.Fprint(w, "success: Created\n")
			}
			rc.Flush()
			return
		}
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// localCopy is RFC 4918 COPY within this server (tree.go does
// collections): 201 when the destination is new, 204 when it was
// replaced, 412 with Overwrite: F and an existing destination, 409 when
// the destination's parent is missing. Everything that refuses the copy
// as a whole (the paths, the source's shape, the rights to replace and
// write the destination) is asked before the first change.
func (h *Handler) localCopy(w http.ResponseWriter, r *http.Request, name string, overwrite bool) error {
	ns, err := h.namespace("copy", name)
	if err != nil {
		return err
	}
	to, err := h.destination(r)
	if err != nil {
		return err
	}
	if err := overlap("copy", name, to); err != nil {
		return err
	}
	ctx := store.NoFollow(r.Context())
	src, err := h.store.Stat(ctx, name)
	if err != nil {
		return err
	}
	shallow := false
	switch {
	case src.IsLink():
		return copyLinkError(name)
	case src.IsDir():
		if shallow, err = copyDepth(r); err == nil && !shallow {
			err = h.checkTree(ctx, name, 0)
		}
		if err != nil {
			return err
		}
	}
	dst, existed, err := h.destinationInfo(ctx, to, overwrite, "copy "+name)
	if err != nil {
		return err
	}
	replace := existed && needsReplacing(src, dst)
	place := store.Call{Op: "create", Path: to, Create: store.CreateOptions{Truncate: true}}
	if src.IsDir() {
		place = store.Call{Op: "mkdir", Path: to}
	}
	if err := h.precheckPlacing(ctx, place, to, replace); err != nil {
		return copiedErr(err, name, to)
	}
	if replace {
		if err := h.replaceTarget(ctx, ns, to, dst); err != nil {
			return err
		}
	}
	if src.IsDir() {
		err = h.copyDir(ctx, ns, name, to, shallow, 0)
	} else {
		err = h.copyOne(ctx, name, to)
	}
	if err != nil {
		return copiedErr(err, name, to)
	}
	answerStored(w, existed)
	return nil
}

// copiedErr answers a refused or failed copy: the source was statted, so
// what is missing is the destination's parent (409).
func copiedErr(err error, name, to string) error {
	if errors.Is(err, store.ErrNotFound) {
		return &httpError{http.StatusConflict, "copy " + name + ": parent of " + to + " does not exist"}
	}
	return err
}

// copyOne copies one file within the store through a temporary.
func (h *Handler) copyOne(ctx context.Context, name, to string) error {
	source, err := tpc.LocalSource(ctx, h.store, name)
	if err != nil {
		return err
	}
	sink, _, err := tpc.LocalSink(ctx, h.store, to, tpc.SinkOptions{Overwrite: true}, h.log)
	if err != nil {
		source.Close()
		return err
	}
	return (&tpc.Job{Src: source, Dst: sink, Buffers: h.cfg.CopyBuffers, Log: h.log}).Run(ctx)
}
