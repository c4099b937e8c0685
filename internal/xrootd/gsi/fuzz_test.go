package gsi

import (
	"bytes"
	"context"
	"testing"
)

// FuzzParseBuffer: any input is parsed or refused without panic, and
// what parses writes back to a buffer that parses the same.
func FuzzParseBuffer(f *testing.F) {
	b := &Buffer{Protocol: "gsi", Step: StepCertReq}
	b.Add(BucketCryptoMod, []byte("ssl"))
	b.Add(BucketVersion, int32Bucket(Version))
	f.Add(b.Marshal())
	f.Add([]byte("gsi\x00\x00\x00\x03\xe8\x00\x00\x00\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		buf, err := ParseBuffer(in)
		if err != nil {
			return
		}
		again, err := ParseBuffer(buf.Marshal())
		if err != nil {
			t.Fatalf("a parsed buffer does not parse again: %v", err)
		}
		if again.Protocol != buf.Protocol || again.Step != buf.Step || len(again.Buckets) != len(buf.Buckets) {
			t.Fatalf("round trip changed the buffer")
		}
		for i := range buf.Buckets {
			if again.Buckets[i].Type != buf.Buckets[i].Type || !bytes.Equal(again.Buckets[i].Data, buf.Buckets[i].Data) {
				t.Fatalf("bucket %d changed", i)
			}
		}
	})
}

// FuzzStep: a handshake takes any first and second step without panic,
// and never an identity from anything but a real client's steps.
func FuzzStep(f *testing.F) {
	p := sharedPKI(f)
	srv := p.server(f)
	c := p.client(f)
	m1, _ := c.Start(srv.Offer())
	h := srv.Handshake()
	out, err := h.Step(context.Background(), m1)
	if err != nil {
		f.Fatal(err)
	}
	m2, _ := c.Continue(out.Reply)
	f.Add(m1, m2)
	f.Add(m1, []byte("gsi\x00\x00\x00\x03\xe9\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		h := srv.Handshake()
		out, err := h.Step(context.Background(), first)
		if err != nil {
			return
		}
		if out.Identity != nil {
			t.Fatal("an identity from a first step")
		}
		out, err = h.Step(context.Background(), second)
		if err == nil && out.Identity != nil {
			t.Fatal("an identity from a step answering another exchange's challenge")
		}
	})
}
