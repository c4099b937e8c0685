package auth

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"sitebox/internal/store"
)

func reqCtx(r *store.Request) context.Context {
	return store.WithRequest(context.Background(), r)
}

func TestGuardOps(t *testing.T) {
	p := testPolicy(t)
	anon := &store.Request{}
	reader := &store.Request{Identity: ident(nil, "read:/store/user")}
	creator := &store.Request{Identity: ident(nil, "read:/store/user", "create:/store/user")}
	modifier := &store.Request{Identity: ident(nil, "modify:/store/user")}
	type call func(ctx context.Context, s store.Store) error
	ns := func(f func(ctx context.Context, n store.Namespace) error) call {
		return func(ctx context.Context, s store.Store) error { n, _ := store.As[store.Namespace](s); return f(ctx, n) }
	}
	create := func(name string, o store.CreateOptions) call {
		return func(ctx context.Context, s store.Store) error { _, err := store.Create(ctx, s, name, o); return err }
	}
	// land uploads to the temporary tmp and lands it at final (or at, if
	// given), as PUT does.
	land := func(tmp, final, at string) call {
		return func(ctx context.Context, s store.Store) error {
			f, err := store.Create(ctx, s, tmp, store.CreateOptions{Exclusive: true, Final: final})
			if err != nil {
				return err
			}
			if at == "" {
				at = final
			}
			n, _ := store.As[store.Namespace](s)
			return store.Land(ctx, f, n, tmp, at)
		}
	}
	precheck := func(c store.Call) call {
		return func(ctx context.Context, s store.Store) error { return store.Precheck(ctx, s, c) }
	}
	tests := []struct {
		name      string
		req       *store.Request
		call      call
		wantErr   string
		wantCalls []string
		wantOpts  *store.CreateOptions // of the Create reaching inner
	}{
		{"stat denied", anon, func(ctx context.Context, s store.Store) error { _, err := s.Stat(ctx, "/store/user/f"); return err },
			"stat /store/user/f: no token: /store/user/f requires a bearer token (read)", nil, nil},
		{"stat allowed", reader, func(ctx context.Context, s store.Store) error { _, err := s.Stat(ctx, "/store/user/f"); return err }, "", []string{"stat"}, nil},
		{"open denied", anon, func(ctx context.Context, s store.Store) error { _, err := s.Open(ctx, "/store/user/f"); return err }, "open /store/user/f: no token", nil, nil},
		{"open allowed", reader, func(ctx context.Context, s store.Store) error { _, err := s.Open(ctx, "/store/user/f"); return err }, "", []string{"open"}, nil},
		{"list denied", anon, func(ctx context.Context, s store.Store) error { _, err := s.List(ctx, "/store/user"); return err }, "list /store/user: no token", nil, nil},
		{"list allowed", reader, func(ctx context.Context, s store.Store) error { _, err := s.List(ctx, "/store/user"); return err }, "", []string{"list"}, nil},
		{"checksum denied", anon, func(ctx context.Context, s store.Store) error {
			_, err := store.Checksum(ctx, s, "/store/user/f", "adler32")
			return err
		}, "checksum /store/user/f: no token", nil, nil},
		{"checksum allowed", reader, func(ctx context.Context, s store.Store) error {
			_, err := store.Checksum(ctx, s, "/store/user/f", "adler32")
			return err
		}, "", []string{"checksum"}, nil},
		{"locate denied", anon, func(ctx context.Context, s store.Store) error {
			_, err := store.Locate(ctx, s, "/store/user/f")
			return err
		}, "locate /store/user/f: no token", nil, nil},
		{"locate allowed", reader, func(ctx context.Context, s store.Store) error {
			_, err := store.Locate(ctx, s, "/store/user/f")
			return err
		}, "", []string{"locate"}, nil},
		{"space denied", anon, func(ctx context.Context, s store.Store) error {
			sr, _ := store.As[store.SpaceReporter](s)
			_, err := sr.Space(ctx, "/store/user")
			return err
		}, "space /store/user: no token", nil, nil},
		{"space allowed", reader, func(ctx context.Context, s store.Store) error {
			sr, _ := store.As[store.SpaceReporter](s)
			_, err := sr.Space(ctx, "/store/user")
			return err
		}, "", []string{"space"}, nil},
		{"privacy without TLS", &store.Request{Identity: ident(nil, "read:/store/secret")},
			func(ctx context.Context, s store.Store) error { _, err := s.Open(ctx, "/store/secret/f"); return err },
			"/store/secret requires TLS (privacy)", nil, nil},
		{"bad path is not a permission error", reader, func(ctx context.Context, s store.Store) error {
			// The frontend cleans the path (once) before any store sees it.
			p, err := store.CleanPath("/store/../etc")
			if err == nil {
				_, err = s.Stat(ctx, p)
			}
			return err
		},
			"'..' is not allowed", nil, nil},

		{"create anonymous", anon, create("/store/user/new", store.CreateOptions{Truncate: true}), "create /store/user/new: no token", nil, nil},
		{"create with read scope", reader, create("/store/user/new", store.CreateOptions{Exclusive: true}),
			"read scope used for a write: no storage.create scope for /store/user/new", nil, nil},
		{"create new file, create scope", creator, create("/store/user/new", store.CreateOptions{Truncate: true, MkParents: true}),
			"", []string{"stat", "create"}, &store.CreateOptions{Exclusive: true, MkParents: true}},
		{"overwrite, create scope", creator, create("/store/user/f", store.CreateOptions{Truncate: true}),
			"token has no storage.modify scope for /store/user/f", []string{"stat"}, nil},
		{"update, create scope", creator, create("/store/user/f", store.CreateOptions{Update: true}), "no storage.modify scope", nil, nil},
		{"exclusive, create scope", creator, create("/store/user/new", store.CreateOptions{Exclusive: true}),
			"", []string{"create"}, &store.CreateOptions{Exclusive: true}},
		{"overwrite, modify scope", modifier, create("/store/user/f", store.CreateOptions{Truncate: true}),
			"", []string{"create"}, &store.CreateOptions{Truncate: true}},
		{"create read-only namespace", modifier, create("/pub/f", store.CreateOptions{}), "/pub is read-only", nil, nil},

		{"mkdir with read scope", reader, ns(func(ctx context.Context, n store.Namespace) error { return n.Mkdir(ctx, "/store/user/d", 0o755, false) }),
			"mkdir /store/user/d: read scope used for a write", nil, nil},
		{"mkdir with create scope", creator, ns(func(ctx context.Context, n store.Namespace) error { return n.Mkdir(ctx, "/store/user/d", 0o755, true) }),
			"", []string{"mkdir"}, nil},
		{"rm with create scope", creator, ns(func(ctx context.Context, n store.Namespace) error { return n.Remove(ctx, "/store/user/f") }),
			"rm /store/user/f: token has no storage.modify scope", nil, nil},
		{"rm with modify scope", modifier, ns(func(ctx context.Context, n store.Namespace) error { return n.Remove(ctx, "/store/user/f") }), "", []string{"rm"}, nil},
		{"rm read-only", modifier, ns(func(ctx context.Context, n store.Namespace) error { return n.Remove(ctx, "/pub/f") }), "rm /pub/f: /pub is read-only", nil, nil},
		{"rmdir with create scope", creator, ns(func(ctx context.Context, n store.Namespace) error { return n.Rmdir(ctx, "/store/user/d") }), "no storage.modify scope", nil, nil},
		{"rmdir with modify scope", modifier, ns(func(ctx context.Context, n store.Namespace) error { return n.Rmdir(ctx, "/store/user/d") }), "", []string{"rmdir"}, nil},
		{"chmod with create scope", creator, ns(func(ctx context.Context, n store.Namespace) error { return n.Chmod(ctx, "/store/user/f", 0o600) }), "no storage.modify scope", nil, nil},
		{"chmod with modify scope", modifier, ns(func(ctx context.Context, n store.Namespace) error { return n.Chmod(ctx, "/store/user/f", 0o600) }), "", []string{"chmod"}, nil},
		// storage.create alone moves no existing file away (it could then
		// write at its name); an upload lands its own temporary (Land).
		{"mv with create only onto a new name", creator, ns(func(ctx context.Context, n store.Namespace) error {
			return n.Rename(ctx, "/store/user/f", "/store/user/g")
		}), "mv /store/user/f: token has no storage.modify scope for /store/user/f (its storage.create scope allows only new files", nil, nil},
		{"mv with create only onto an existing file", creator, ns(func(ctx context.Context, n store.Namespace) error {
			return n.Rename(ctx, "/store/user/a/f", "/store/user/f")
		}),
			"mv /store/user/a/f: token has no storage.modify scope", nil, nil},
		{"upload lands with create only", creator, land("/store/user/.tmp1", "/store/user/new", ""),
			"", []string{"stat", "create", "stat", "mv"}, &store.CreateOptions{Exclusive: true, Final: "/store/user/new"}},
		{"upload lands with a scope for exactly the file", &store.Request{Identity: ident(nil, "create:/store/user/new")},
			land("/store/user/.tmp1", "/store/user/new", ""), "", []string{"stat", "create", "stat", "mv"}, nil},
		{"upload refused names the final name", reader, land("/store/user/.tmp1", "/store/user/new", ""),
			"create /store/user/new: read scope used for a write: no storage.create scope for /store/user/new", nil, nil},
		{"upload with create only over an existing file", creator, land("/store/user/.tmp1", "/store/user/f", ""),
			"create /store/user/f: token has no storage.modify scope for /store/user/f", []string{"stat"}, nil},
		{"upload over an existing file, modify", modifier, land("/store/user/.tmp1", "/store/user/f", ""),
			"", []string{"create", "mv"}, nil},
		{"precheck a move, create only", creator, precheck(store.Call{Op: "mv", Path: "/store/user/f", To: "/store/user/g"}),
			"mv /store/user/f: token has no storage.modify scope", nil, nil},
		{"precheck a move onto an existing file", &store.Request{Identity: ident(nil, "modify:/store/user/a", "create:/store/user")},
			precheck(store.Call{Op: "mv", Path: "/store/user/a/f", To: "/store/user/f"}), "mv /store/user/f: token has no storage.modify scope", []string{"stat"}, nil},
		{"precheck a removal", creator, precheck(store.Call{Op: "rm", Path: "/store/user/f"}), "rm /store/user/f: token has no storage.modify scope", nil, nil},
		{"precheck allowed", modifier, precheck(store.Call{Op: "mv", Path: "/store/user/f", To: "/store/user/g"}), "", nil, nil},
		{"mv modify source, create new destination", &store.Request{Identity: ident(nil, "modify:/store/user/a", "create:/store/user/b")},
			ns(func(ctx context.Context, n store.Namespace) error {
				return n.Rename(ctx, "/store/user/a/f", "/store/user/b/g")
			}), "", []string{"stat", "mv"}, nil},
		{"mv onto existing with create only", &store.Request{Identity: ident(nil, "modify:/store/user/a", "create:/store/user")},
			ns(func(ctx context.Context, n store.Namespace) error {
				return n.Rename(ctx, "/store/user/a/f", "/store/user/f")
			}),
			"mv /store/user/f: token has no storage.modify scope", []string{"stat"}, nil},
		{"mv to unscoped destination", &store.Request{Identity: ident(nil, "modify:/store/user/a")},
			ns(func(ctx context.Context, n store.Namespace) error {
				return n.Rename(ctx, "/store/user/a/f", "/store/user/b/g")
			}),
			"mv /store/user/b/g: token has no storage.create scope", nil, nil},
		{"mv with modify everywhere", modifier,
			ns(func(ctx context.Context, n store.Namespace) error {
				return n.Rename(ctx, "/store/user/a", "/store/user/f")
			}), "", []string{"mv"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inner := newMemStore("/store/user/f", "/store/user/a/f", "/store/secret/f")
			g := NewGuard(inner, p, nil)
			err := tc.call(reqCtx(tc.req), g)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("err %v", err)
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(tc.wantErr, "..") == errors.Is(err, store.ErrPermission) {
					t.Errorf("errors.Is(%v, ErrPermission) = %v", err, !strings.Contains(tc.wantErr, ".."))
				}
			}
			if got := inner.called(); !reflect.DeepEqual(got, tc.wantCalls) {
				t.Errorf("inner calls %q, want %q", got, tc.wantCalls)
			}
			if tc.wantOpts != nil && inner.opts != *tc.wantOpts {
				t.Errorf("inner Create options %+v, want %+v", inner.opts, *tc.wantOpts)
			}
		})
	}
}

// An upload's temporary is checked for its final name, so the guard holds
// the frontends to that name: the temporary next to it, landing there.
func TestGuardUploadMisuse(t *testing.T) {
	ctx := reqCtx(&store.Request{Identity: ident(nil, "create:/store/user/new")})
	g := NewGuard(newMemStore(), testPolicy(t), nil)
	if _, err := store.Create(ctx, g, "/store/user/a/.tmp1", store.CreateOptions{Final: "/store/user/new"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a temporary in another directory: %v", err)
	}
	f, err := store.Create(ctx, g, "/store/user/.tmp1", store.CreateOptions{Final: "/store/user/new"})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := store.As[store.Namespace](g)
	if err := store.Land(ctx, f, n, "/store/user/.tmp1", "/store/user/other"); !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "lands at /store/user/new") {
		t.Errorf("landing elsewhere: %v", err)
	}
}

// Wrappers hiding some of memStore's optional interfaces.
type (
	plainStore struct{ store.Store }
	nsStore    struct {
		store.Store
		store.Namespace
	}
	spaceStore struct {
		store.Store
		store.SpaceReporter
	}
)

func TestGuardKeepsInterfaces(t *testing.T) {
	m := newMemStore()
	for _, tc := range []struct {
		name          string
		inner         store.Store
		wantNS, wantS bool
	}{
		{"store only", plainStore{m}, false, false},
		{"namespace", nsStore{m, m}, true, false},
		{"space", spaceStore{m, m}, false, true},
		{"both", m, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGuard(tc.inner, testPolicy(t), nil)
			_, isNS := store.As[store.Namespace](g)
			_, isS := store.As[store.SpaceReporter](g)
			if isNS != tc.wantNS || isS != tc.wantS {
				t.Errorf("Namespace %v SpaceReporter %v, want %v %v", isNS, isS, tc.wantNS, tc.wantS)
			}
		})
	}
}

func TestGuardIntegrityFiles(t *testing.T) {
	g := NewGuard(newMemStore("/store/integ/f", "/pub/f"), testPolicy(t), nil)
	for _, tc := range []struct {
		name      string
		path      string
		tls       bool
		wantCheck bool
	}{
		{"integrity without TLS", "/store/integ/f", false, true},
		{"integrity with TLS", "/store/integ/f", true, false},
		{"no protection", "/pub/f", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := g.Open(reqCtx(&store.Request{TLS: tc.tls}), tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rc, marked := f.(interface{ RequiresChecksums() bool })
			if marked != tc.wantCheck || marked && !rc.RequiresChecksums() {
				t.Errorf("RequiresChecksums present %v, want %v", marked, tc.wantCheck)
			}
			if _, ok := f.(store.SendFiler); ok == tc.wantCheck {
				t.Errorf("SendFiler present %v, want %v", ok, !tc.wantCheck)
			}
			cr, ok := f.(store.ContextReaderAt)
			if !ok {
				t.Fatal("ContextReaderAt lost")
			}
			buf := make([]byte, 4)
			if n, err := cr.ReadAtContext(context.Background(), buf, 0); n != 4 || err != nil || string(buf) != "data" {
				t.Errorf("ReadAtContext = %d, %v, %q", n, err, buf)
			}
		})
	}
}

// Uploads into an integrity namespace over a plain connection are marked
// too, so the root:// frontend takes only checksummed writes.
func TestGuardIntegrityCreate(t *testing.T) {
	g := NewGuard(newMemStore(), testPolicy(t), nil)
	writer := ident(nil, "modify:/store/integ")
	for _, tls := range []bool{false, true} {
		w, err := store.Create(reqCtx(&store.Request{TLS: tls, Identity: writer}), g, "/store/integ/new", store.CreateOptions{Truncate: true})
		if err != nil {
			t.Fatal(err)
		}
		_, marked := w.(interface{ RequiresChecksums() bool })
		if marked == tls {
			t.Errorf("TLS %v: marked %v", tls, marked)
		}
		w.Close()
	}
}

func TestGuardLogsDenials(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	g := NewGuard(newMemStore("/store/user/f"), testPolicy(t), log)
	ctx := reqCtx(&store.Request{Client: "192.0.2.7", Identity: ident([]string{"/cms"}, "read:/store/user/a")})
	if _, err := g.Open(ctx, "/store/user/f"); err == nil {
		t.Fatal("open allowed")
	}
	if _, err := g.Stat(ctx, "/store/user/a/x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("allowed stat: %v", err)
	}
	out := buf.String()
	if n := strings.Count(out, "\n"); n != 1 {
		t.Fatalf("%d log lines, want 1:\n%s", n, out)
	}
	for _, want := range []string{"level=INFO", `msg="access denied"`, "op=open", "path=/store/user/f", "subject=alice",
		"client=192.0.2.7", `reason="token has no storage.read scope for /store/user/f (it has /store/user/a)"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
}

// A denial of an X.509 user names how it was proven, its DN and its
// FQANs.
func TestGuardLogsX509Denials(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	g := NewGuard(newMemStore("/store/user/f"), testPolicy(t), log)
	id := ident([]string{"/cms"})
	id.Method, id.Issuer, id.Subject = MethodX509, "x509:/DC=org/CN=CA", "/DC=org/CN=Alice"
	id.FQANs = []string{"/cms/Role=NULL/Capability=NULL"}
	if _, err := g.Open(reqCtx(&store.Request{Client: "192.0.2.7", Identity: id}), "/store/user/f"); err == nil {
		t.Fatal("open allowed")
	}
	for _, want := range []string{`subject="/DC=org/CN=Alice" issuer="x509:/DC=org/CN=CA" auth=x509 fqans="[/cms/Role=NULL/Capability=NULL]"`} {
		if out := buf.String(); !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
}

// A request may remove what it created itself (an upload's temporary
// after a failure) with only a create scope; not another file, and not in
// another request.
func TestGuardRemovesOwnCreation(t *testing.T) {
	g := NewGuard(newMemStore("/store/user/old"), testPolicy(t), nil)
	ns, _ := store.As[store.Namespace](g)
	r := &store.Request{Identity: ident(nil, "create:/store/user")}
	ctx := reqCtx(r)
	w, err := store.Create(ctx, g, "/store/user/.tmp", store.CreateOptions{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := store.Discard(ctx, w, ns, "/store/user/.tmp"); err != nil {
		t.Errorf("removing its own creation: %v", err)
	}
	if err := ns.Remove(ctx, "/store/user/old"); err == nil {
		t.Error("create scope removed an existing file")
	}
	other := reqCtx(&store.Request{Identity: ident(nil, "create:/store/user")})
	w, _ = store.Create(ctx, g, "/store/user/.tmp2", store.CreateOptions{Exclusive: true})
	w.Close()
	if err := ns.Remove(other, "/store/user/.tmp2"); err == nil {
		t.Error("another request removed a file it did not create")
	}
}
