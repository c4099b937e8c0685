package gsi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestBufferRoundTrip(t *testing.T) {
	b := &Buffer{Protocol: "gsi", Step: StepCertReq}
	b.Add(BucketCryptoMod, []byte("ssl"))
	b.Add(BucketVersion, int32Bucket(Version))
	b.Add(BucketMain, nil)
	wire := b.Marshal()
	// "gsi\0", step, 3 buckets (8 + data each), end marker.
	if want := 4 + 4 + (8 + 3) + (8 + 4) + 8 + 4; len(wire) != want {
		t.Fatalf("%d bytes, want %d: %q", len(wire), want, wire)
	}
	got, err := ParseBuffer(wire)
	if err != nil {
		t.Fatal(err)
	}
	if got.Protocol != "gsi" || got.Step != StepCertReq || len(got.Buckets) != 3 {
		t.Fatalf("parsed %+v", got)
	}
	if v, ok, err := got.Int32(BucketVersion); !ok || err != nil || v != Version {
		t.Errorf("version %d %v %v", v, ok, err)
	}
	if d, ok := got.Get(BucketMain); !ok || len(d) != 0 {
		t.Errorf("empty main bucket: %q %v", d, ok)
	}
	if !bytes.Equal(got.Marshal(), wire) {
		t.Errorf("marshal of the parse differs")
	}
	// XRootD ignores bytes after the end marker; so does the parser.
	if _, err := ParseBuffer(append(wire, "pad"...)); err != nil {
		t.Errorf("trailing bytes: %v", err)
	}
}

func TestParseBufferRefuses(t *testing.T) {
	head := func(name string) []byte { return binary.BigEndian.AppendUint32([]byte(name+"\x00"), 1000) }
	bucket := func(b []byte, typ, n int32, data string) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(typ))
		b = binary.BigEndian.AppendUint32(b, uint32(n))
		return append(b, data...)
	}
	end := func(b []byte) []byte { return binary.BigEndian.AppendUint32(b, 0) }
	many := head("gsi")
	for i := range maxBuckets + 1 {
		many = bucket(many, int32(3000+i), 0, "")
	}
	cases := []struct {
		name string
		in   []byte
		want error
		text string
	}{
		{"empty", nil, ErrMalformed, "no NUL-terminated protocol name"},
		{"empty name", []byte("\x00\x00\x00\x03\xe8"), ErrMalformed, "empty protocol name"},
		{"name too long", []byte("gsigsigsi\x00"), ErrMalformed, "no NUL-terminated"},
		{"no step", []byte("gsi\x00\x00"), ErrMalformed, "no step"},
		{"no end", head("gsi"), ErrMalformed, "no end marker"},
		{"no length", append(head("gsi"), 0, 0, 0x0b, 0xb8), ErrMalformed, "has no length"},
		{"negative length", end(bucket(head("gsi"), 3000, -1, "")), ErrMalformed, "claims -1 bytes"},
		{"length past the end", end(bucket(head("gsi"), 3000, 100, "ssl")), ErrMalformed, "claims 100 bytes"},
		{"huge length", bucket(head("gsi"), 3000, 1<<31-1, "ssl"), ErrMalformed, "claims 2147483647 bytes"},
		{"repeated type", end(bucket(bucket(head("gsi"), 3000, 3, "ssl"), 3000, 3, "ssl")), ErrMalformed, "repeated or inactive"},
		{"inactive bucket", end(bucket(head("gsi"), 1, 0, "")), ErrMalformed, "repeated or inactive"},
		{"too many buckets", end(many), ErrTooLarge, "more than 32 buckets"},
		{"too large", append(head("gsi"), make([]byte, MaxCredential)...), ErrTooLarge, "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseBuffer(c.in)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
				t.Errorf("got %v, want %v naming %q", err, c.want, c.text)
			}
		})
	}
}
