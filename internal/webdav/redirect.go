package webdav

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/store"
)

// withRequest puts what stores need to know about the client into the
// request's context: its address, the CGI of the URL (?vo=cms&tried=host),
// whether it came over TLS and who its token says it is.
func (h *Handler) withRequest(r *http.Request) *http.Request {
	client := r.RemoteAddr
	if host, _, err := net.SplitHostPort(client); err == nil {
		client = host
	}
	req := store.NewRequest(client, r.URL.RawQuery)
	req.Proto = "https"
	ctx := store.WithRequest(r.Context(), req)
	if note := h.authenticate(r, req); note != "" {
		ctx = context.WithValue(ctx, credentialNoteKey{}, note)
	}
	return r.WithContext(ctx)
}

// credentialNoteKey holds, in a request's context, what of its
// credential was not accepted (VOMS attributes): refusals add it.
type credentialNoteKey struct{}

// target is where a route sends an https client.
type target struct {
	location string   // the first endpoint with an https:// service
	links    []string // every such endpoint, best first, as full URLs
	rootOnly string   // with no https endpoint: the first root:// host
}

// redirectTarget builds the URLs of rt's endpoints for the request path
// name (cleaned, unescaped) and the request's raw query. Endpoints whose
// HTTPS base is not a usable http(s)://host URL are skipped, so a bad
// registry entry costs an alternative, never a broken Location.
func redirectTarget(name, rawQuery string, rt store.Route) target {
	var t target
	suffix := escapePath(name)
	if q := mergeQuery(rawQuery, rt.Opaque); q != "" {
		suffix += "?" + q
	}
	for _, ep := range rt.To {
		base, ok := httpsBase(ep.HTTPS)
		if !ok {
			if t.rootOnly == "" && ep.Root != "" {
				t.rootOnly = ep.Root
			}
			continue
		}
		u := base + suffix
		if t.location == "" {
			t.location = u
		}
		t.links = append(t.links, u)
	}
	return t
}

// httpsBase checks an endpoint's base URL and returns it without a
// trailing slash.
func httpsBase(raw string) (string, bool) {
	if raw == "" {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", false
	}
	return strings.TrimRight(raw, "/"), true
}

// mergeQuery joins the client's query with the director's opaque CGI;
// for a key in both the opaque value wins. Pairs are kept byte for byte
// (tokens are not re-encoded), the client's first, in their order.
func mergeQuery(orig, opaque string) string {
	override := map[string]bool{}
	var out []string
	for _, kv := range strings.Split(opaque, "&") {
		if kv != "" {
			override[queryKey(kv)] = true
			out = append(out, kv)
		}
	}
	var kept []string
	for _, kv := range strings.Split(orig, "&") {
		if kv != "" && !override[queryKey(kv)] {
			kept = append(kept, kv)
		}
	}
	return strings.Join(append(kept, out...), "&")
}

func queryKey(kv string) string {
	k, _, _ := strings.Cut(kv, "=")
	if uk, err := url.QueryUnescape(k); err == nil {
		return uk
	}
	return k
}

// linkHeader is the metalink-style list davix and dCache read to find
// replicas: `<url>; rel=duplicate; pri=N`, pri 1 the best.
func linkHeader(links []string) string {
	parts := make([]string, len(links))
	for i, l := range links {
		parts[i] = "<" + l + ">; rel=duplicate; pri=" + strconv.Itoa(i+1)
	}
	return strings.Join(parts, ", ")
}

// retryAfter is a route's wait in whole seconds, at least 1: a
// Retry-After of 0 would make clients spin.
func retryAfter(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// route asks the store where c is served and, unless here, answers the
// client itself: a redirect, an "only over root://" 502 or a 503 with
// Retry-After. answered reports that it did; err is the call's own
// answer (found nowhere, a redirect loop), for the caller to treat as the
// call's error. The Location is built from the request path, ending as
// the client's did.
func (h *Handler) route(w http.ResponseWriter, r *http.Request, c store.Call) (answered bool, err error) {
	rt, err := store.RouteOf(r.Context(), h.store, c)
	if err != nil || rt.Here() {
		return false, err
	}
	if rt.Retry {
		secs := retryAfter(rt.Wait)
		h.log.Debug("asking client to wait", "method", r.Method, "path", c.Path, "seconds", secs, "reason", rt.Reason)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		reason := rt.Reason
		if reason == "" {
			reason = "still locating this file"
		}
		http.Error(w, fmt.Sprintf("%s: %s; retry in %d s", c.Path, reason, secs), http.StatusServiceUnavailable)
		return true, nil
	}
	if extra := h.destOpaque(r); extra != "" { // dav.go
		rt.Opaque = strings.TrimPrefix(rt.Opaque+"&"+extra, "&")
	}
	t := redirectTarget(spelled(r, c.Path), r.URL.RawQuery, rt) // names.go
	if t.location == "" {
		h.log.Warn("redirect has no https endpoint", "method", r.Method, "path", c.Path, "to", rt.To, "reason", rt.Reason)
		msg := fmt.Sprintf("%s is only reachable over root:// at %s (root://%s/%s)", c.Path, t.rootOnly, t.rootOnly, c.Path)
		if t.rootOnly == "" {
			msg = c.Path + " is held by servers this one cannot send an https:// client to (no https:// or root:// address)"
		}
		http.Error(w, msg, http.StatusBadGateway)
		return true, nil
	}
	h.log.Debug("redirect", "method", r.Method, "path", c.Path, "to", t.location, "reason", rt.Reason)
	w.Header().Set("Location", t.location)
	w.Header().Set("Link", linkHeader(t.links))
	http.Error(w, "redirecting to "+t.location, http.StatusTemporaryRedirect)
	return true, nil
}
