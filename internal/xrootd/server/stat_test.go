package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// highID is a store whose files have IDs with the top bit set, as an
// origin's (inode and device mixed) can.
type highID struct{ store.Store }

func (h highID) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	fi, err := h.Store.Stat(ctx, name)
	fi.ID = 1<<63 | 42
	return fi, err
}

// A stat answer's id is unsigned, as xrootd writes it, never negative.
func TestStatIDIsUnsigned(t *testing.T) {
	st, dir := newOriginStore(t, false)
	writeTestFile(t, filepath.Join(dir, "f"), []byte("x"))
	r := login(t, startServer(t, Config{}, highID{st}))
	code, body := r.call(proto.ReqStat, [16]byte{}, []byte("/f"))
	if code != proto.StatusOK {
		t.Fatalf("stat: %d %q", code, body)
	}
	if id, _, _ := strings.Cut(string(body), " "); id != "9223372036854775850" {
		t.Errorf("stat id %q, want 9223372036854775850", id)
	}
}
