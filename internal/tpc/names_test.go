package tpc_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/tpc"
)

// A copy refused or failing at its destination names the path the client
// asked for, never the hidden temporary it writes; a destination that
// only storage.create covers still takes a new file.
func TestSinkNamesTheTarget(t *testing.T) {
	st, _ := newStore(t)
	p, err := auth.NewPolicy([]auth.Namespace{{Prefix: "/store", Read: auth.ReadPublic, Write: auth.WriteToken}})
	if err != nil {
		t.Fatal(err)
	}
	g := auth.NewGuard(st, p, nil)
	as := func(scopes ...store.Scope) context.Context {
		return store.WithRequest(context.Background(), &store.Request{Identity: &store.Identity{Subject: "s", Scopes: scopes}})
	}
	_, _, err = tpc.LocalSink(as(store.Scope{Op: store.ScopeRead, Path: "/store"}), g, "/store/d/target", tpc.SinkOptions{Overwrite: true, MkParents: true}, nil)
	if !errors.Is(err, store.ErrPermission) || strings.Contains(err.Error(), tpc.TempPrefix) || !strings.Contains(err.Error(), "/store/d/target") {
		t.Errorf("refused sink: %v, want a refusal naming /store/d/target only", err)
	}
	ctx := as(store.Scope{Op: store.ScopeCreate, Path: "/store/d/target"})
	sink, _, err := tpc.LocalSink(ctx, g, "/store/d/target", tpc.SinkOptions{Overwrite: true, MkParents: true}, nil)
	if err != nil {
		t.Fatalf("sink with a create scope for exactly the target: %v", err)
	}
	if _, err := sink.File.WriteAt([]byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	sink.File.Close()
	if err := sink.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if fi, err := st.Stat(context.Background(), "/store/d/target"); err != nil || fi.Size != 1 {
		t.Errorf("target: %+v %v", fi, err)
	}
}
