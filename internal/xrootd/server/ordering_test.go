package server

import (
	"strings"
	"testing"

	"sitebox/internal/xrootd/proto"
)

// TestNamespaceChangesInOrder pipelines mkdirs of a nested path, each
// needing the one before, then rms from the deepest up, each needing the
// one before, without waiting for answers (as fsspec-xrootd's recursive
// rm does): every one succeeds because they run in the order sent.
func TestNamespaceChangesInOrder(t *testing.T) {
	addr, _ := testEnv(t, Config{})
	r := login(t, addr)
	var paths []string
	p := ""
	for i := range 30 {
		p += "/d" + strings.Repeat("x", i%3)
		paths = append(paths, p)
	}
	var sids []proto.StreamID
	for _, p := range paths {
		sids = append(sids, r.send(proto.ReqMkdir, [16]byte{}, []byte(p)))
	}
	for i := len(paths) - 1; i >= 0; i-- {
		id := uint16(proto.ReqRmdir)
		if i%2 == 0 {
			id = proto.ReqRm // rm of an empty directory removes it, as in xrootd
		}
		sids = append(sids, r.send(id, [16]byte{}, []byte(paths[i])))
	}
	answers := map[proto.StreamID]uint16{}
	bodies := map[proto.StreamID][]byte{}
	for range sids {
		h, b := r.recv()
		answers[h.Stream], bodies[h.Stream] = h.Status, b
	}
	for i, sid := range sids {
		if answers[sid] != proto.StatusOK {
			code, msg := errOf(bodies[sid])
			t.Errorf("request %d: status %d, error %d %q", i, answers[sid], code, msg)
		}
	}
}
