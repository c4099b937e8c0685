package director

import (
	"errors"
	"testing"

	"sitebox/internal/store"
)

// TestChangesGoToTheHolder: namespace changes are sent to an origin
// holding the path (this site's first), never to a cache or a VO
// federation; new names go where uploads go.
func TestChangesGoToTheHolder(t *testing.T) {
	p := &fakeProber{files: map[string][]string{
		"a:1": {"/store/both", "/store/dir/f"},
		"b:1": {"/store/both", "/store/onlyB"},
	}}
	d := newTestDirector(t, Config{Site: "A", VO: map[string]store.Endpoint{"cms": {Root: "cms:1094"}}}, p)
	d.Advertise(ad("originA", "A", RoleOrigin, "a:1", "/store"))
	d.Advertise(ad("originB", "B", RoleOrigin, "b:1", "/store"))
	d.Advertise(ad("cacheA", "A", RoleCache, "c:1", "/store"))
	route := func(c store.Call, cgi string) routed {
		rt, err := d.Route(reqCtx(cgi), c)
		return routed{rt, err}
	}
	for _, tc := range []struct {
		call store.Call
		want string
	}{
		{store.Call{Op: "rm", Path: "/store/onlyB"}, "b:1"},
		{store.Call{Op: "mv", Path: "/store/both"}, "a:1"},
		{store.Call{Op: "rmdir", Path: "/store/dir"}, "a:1"},
		{store.Call{Op: "chmod", Path: "/store/onlyB"}, "b:1"},
		{store.Call{Op: "create", Path: "/store/onlyB", Create: store.CreateOptions{Update: true}}, "b:1"},
		{store.Call{Op: "mkdir", Path: "/store/newdir"}, "a:1"},
		{store.Call{Op: "copy", Path: "/store/onlyB"}, "b:1"},
		// User attributes are the origin's, read or written (a cache
		// holding a copy has none of its own).
		{store.Call{Op: "getxattr", Path: "/store/both"}, "a:1"},
		{store.Call{Op: "listxattr", Path: "/store/onlyB"}, "b:1"},
		{store.Call{Op: "setxattr", Path: "/store/onlyB"}, "b:1"},
		{store.Call{Op: "delxattr", Path: "/store/both"}, "a:1"},
	} {
		if _, to := redirectOf(t, route(tc.call, "")); to != tc.want {
			t.Errorf("%s %s: sent to %s, want %s", tc.call.Op, tc.call.Path, to, tc.want)
		}
	}
	if r := route(store.Call{Op: "rm", Path: "/store/nowhere"}, "vo=cms"); !errors.Is(r.err, store.ErrNotFound) {
		t.Errorf("rm of a file no origin holds: %+v, want not found (not the VO federation)", r)
	}
}

// TestUploadForgetsNotFound: a path looked up and not found is found as
// soon as an upload of it has been redirected, without waiting for the
// negative answer to expire.
func TestUploadForgetsNotFound(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"a:1": {}}}
	d := newTestDirector(t, Config{Site: "A"}, p)
	d.Advertise(ad("originA", "A", RoleOrigin, "a:1", "/store"))
	if r := d.routeT(reqCtx(""), "stat", "/store/new"); !errors.Is(r.err, store.ErrNotFound) {
		t.Fatalf("stat before the upload: %+v, want not found", r)
	}
	if _, to := redirectOf(t, routed{}.with(d.Route(reqCtx(""), store.Call{Op: "create", Path: "/store/new"}))); to != "a:1" {
		t.Fatalf("upload sent to %s", to)
	}
	p.mu.Lock()
	p.files["a:1"] = []string{"/store/new"}
	p.mu.Unlock()
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "stat", "/store/new")); to != "a:1" {
		t.Errorf("stat after the upload: sent to %s", to)
	}
}

func (routed) with(rt store.Route, err error) routed { return routed{rt, err} }
