package server

import (
	"bytes"
	"testing"

	"sitebox/internal/xrootd/proto"
)

func TestSet(t *testing.T) {
	addr, _ := testEnv(t, Config{})
	r := login(t, addr)
	for _, tc := range []struct {
		name, arg string
		code      int32 // 0: ok
		body      []byte
	}{
		{"appid", "appid my analysis", 0, nil},
		{"monitor info", "monitor info job 42", 0, []byte{0, 0, 0, 0}},
		{"monitor on", "monitor on myapp", 0, nil},
		{"monitor off", "monitor off", 0, nil},
		{"empty", "", proto.ErrArgMissing, nil},
		{"monitor without argument", "monitor", proto.ErrArgMissing, nil},
		{"bad monitor argument", "monitor sideways", proto.ErrArgInvalid, nil},
		{"unknown key", "cache off", proto.ErrArgInvalid, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := r.call(proto.ReqSet, [16]byte{}, []byte(tc.arg))
			if tc.code != 0 {
				r.wantErr(tc.name, st, body, tc.code)
				return
			}
			if st != proto.StatusOK || !bytes.Equal(body, tc.body) {
				t.Fatalf("set %q: %d %q, want ok %q", tc.arg, st, body, tc.body)
			}
		})
	}
}
