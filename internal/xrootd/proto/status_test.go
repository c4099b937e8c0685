package proto

import (
	"errors"
	"testing"
)

func TestPgPages(t *testing.T) {
	tests := []struct {
		off  int64
		n    int
		want int
	}{
		{0, 0, 0}, {0, 1, 1}, {0, 4096, 1}, {0, 4097, 2}, {4095, 1, 1}, {4095, 2, 2},
		{100, 3996, 1}, {100, 3997, 2}, {100, 3996 + 8192, 3}, {100, 3996 + 8193, 4},
	}
	for _, tt := range tests {
		if got := PgPages(tt.off, tt.n); got != tt.want {
			t.Errorf("PgPages(%d, %d) = %d, want %d", tt.off, tt.n, got, tt.want)
		}
	}
}

func TestPgwriteDataLen(t *testing.T) {
	tests := []struct {
		off  int64
		dlen int
		want int // -1: layout error
	}{
		{0, 5, 1},
		{0, 4, -1},
		{0, 4100, 4096},
		{0, 4101, -1},   // a second unit with no room for data
		{0, 4105, 4097}, // 4096 + one byte
		{0, 2 * 4100, 8192},
		{4000, 100, 96}, // first page runs to 4096
		{4000, 100 + 4100, 96 + 4096},
		{4000, 100 + 4104, -1}, // last unit of 4 bytes: checksum only
		{-1, 100, -1},
	}
	for _, tt := range tests {
		got, err := PgwriteDataLen(tt.off, tt.dlen)
		if tt.want < 0 {
			if !errors.Is(err, ErrPgLayout) {
				t.Errorf("PgwriteDataLen(%d, %d) = %d, %v; want a layout error", tt.off, tt.dlen, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("PgwriteDataLen(%d, %d) = %d, %v; want %d", tt.off, tt.dlen, got, err, tt.want)
		}
	}
}

func TestStatusRoundTrip(t *testing.T) {
	var buf [StatusPrefixLen + 8]byte
	info := []byte{0, 0, 0, 0, 0, 0, 0x10, 0}
	b := PutStatus(buf[:], StreamID{3, 4}, ReqPgread, RespPartial, info, 12345)
	h := ParseResponseHeader(b)
	if h.Status != StatusStatus || h.Dlen != StatusBodyLen+8 || h.Stream != (StreamID{3, 4}) {
		t.Fatalf("header %+v", h)
	}
	st, rest, err := ParseStatus(b[ResponseHeaderLen:])
	if err != nil || st.ReqID != ReqPgread || st.RespType != RespPartial || st.DataLen != 12345 || string(rest) != string(info) {
		t.Fatalf("status %+v %x %v", st, rest, err)
	}
	b[ResponseHeaderLen+10] ^= 1
	if _, _, err := ParseStatus(b[ResponseHeaderLen:]); err == nil {
		t.Fatal("corrupted status body accepted")
	}
}
