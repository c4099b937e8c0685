package gsi

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"sitebox/internal/store"
)

// exchange runs both steps of one exchange between c and a new
// handshake of srv.
func exchange(t *testing.T, srv *Server, c *Client) (*store.Identity, error) {
	t.Helper()
	h := srv.Handshake()
	m1, err := c.Start(srv.Offer())
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.Step(context.Background(), m1)
	if err != nil {
		return nil, err
	}
	m2, err := c.Continue(out.Reply)
	if err != nil {
		t.Fatalf("the client refused the server's answer: %v", err)
	}
	out, err = h.Step(context.Background(), m2)
	return out.Identity, err
}

// edit parses a buffer, changes it and writes it again.
func edit(t *testing.T, msg []byte, f func(*Buffer)) []byte {
	t.Helper()
	b, err := ParseBuffer(msg)
	if err != nil {
		t.Fatal(err)
	}
	f(b)
	return b.Marshal()
}

// set replaces (or adds) a bucket.
func set(b *Buffer, typ BucketType, data []byte) {
	for i := range b.Buckets {
		if b.Buckets[i].Type == typ {
			b.Buckets[i].Data = data
			return
		}
	}
	b.Add(typ, data)
}

func TestExchange(t *testing.T) {
	p := sharedPKI(t)
	srv := p.server(t)
	if want := "gsi,v:10600,c:ssl,ca:" + p.caHash + "|"; !strings.HasPrefix(srv.Offer(), want) || len(srv.Offer()) != len(want)+10 {
		t.Errorf("offer %q, want %q and the old hash", srv.Offer(), want)
	}
	id, err := exchange(t, srv, p.client(t))
	if err != nil || id == nil || id.Subject != "/O=example/CN=Alice" {
		t.Fatalf("identity %+v, err %v", id, err)
	}
}

// A step 1001 is good for the exchange it answers only.
func TestExchangeReplay(t *testing.T) {
	p := sharedPKI(t)
	srv := p.server(t)
	ctx := context.Background()
	first, second := srv.Handshake(), srv.Handshake()
	ca, cb := p.client(t), p.client(t)
	m1a, _ := ca.Start(srv.Offer())
	m1b, _ := cb.Start(srv.Offer())
	ra, err := first.Step(ctx, m1a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := second.Step(ctx, m1b); err != nil {
		t.Fatal(err)
	}
	m2a, err := ca.Continue(ra.Reply)
	if err != nil {
		t.Fatal(err)
	}
	before := p.verifiedCount()
	if _, err := second.Step(ctx, m2a); err == nil || !strings.Contains(err.Error(), "random tag mismatch") {
		t.Errorf("another session's step 1001: %v, want refused", err)
	}
	if p.verifiedCount() != before {
		t.Errorf("a replayed chain reached the verifier")
	}
	// The exchange it came from was not disturbed, and takes it once.
	if out, err := first.Step(ctx, m2a); err != nil || out.Identity == nil {
		t.Errorf("its own session: %v", err)
	}
	if _, err := first.Step(ctx, m2a); err == nil || !strings.Contains(err.Error(), "came before the certificate request") {
		t.Errorf("the same step again: %v, want refused", err)
	}
}

// The challenge must come back signed by this exchange's client key,
// even when the rest of the step is right.
func TestExchangeWrongChallenge(t *testing.T) {
	p := sharedPKI(t)
	srv := p.server(t)
	c := p.client(t)
	h := srv.Handshake()
	m1, _ := c.Start(srv.Offer())
	out, err := h.Step(context.Background(), m1)
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := ParseBuffer(out.Reply)
	if err := c.checkServer(reply); err != nil {
		t.Fatal(err)
	}
	key, blob, err := c.agree(reply)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := c.certStep(key, blob, []byte("AAAAAAAA"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Step(context.Background(), m2); err == nil || !strings.Contains(err.Error(), "random tag mismatch") {
		t.Errorf("another challenge signed: %v", err)
	}
}

// The proof of possession: the key sent, the signatures and the chain's
// end must be one key.
func TestExchangeKeyMismatch(t *testing.T) {
	p := sharedPKI(t)
	otherPEM, _ := publicKeyPEM(&p.otherKey.PublicKey)
	proxyPEM, _ := publicKeyPEM(&p.proxyKey.PublicKey)
	cases := []struct {
		name   string
		client *Client
		edit   func(*Buffer)
		want   string
	}{
		{name: "a key that is not the proxy's", client: p.clientWith(t, p.chain(), p.otherKey),
			want: "not its certificate's"},
		{name: "the proxy's key sent, another key signed", client: p.clientWith(t, p.chain(), p.otherKey),
			edit: func(b *Buffer) { set(b, BucketPublicKey, proxyPEM) }, want: "not signed with the key it sent"},
		{name: "another key sent, the proxy's signed", client: p.client(t),
			edit: func(b *Buffer) { set(b, BucketPublicKey, otherPEM) }, want: "not signed with the key it sent"},
		{name: "the user certificate's key for the proxy", client: p.clientWith(t, p.chain(), p.userKey),
			want: "not its certificate's"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := p.server(t)
			h := srv.Handshake()
			m1, _ := c.client.Start(srv.Offer())
			out, err := h.Step(context.Background(), m1)
			if err != nil {
				t.Fatal(err)
			}
			m2, err := c.client.Continue(out.Reply)
			if err != nil {
				t.Fatal(err)
			}
			if c.edit != nil {
				m2 = edit(t, m2, c.edit)
			}
			if _, err := h.Step(context.Background(), m2); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// The first step is refused before anything is signed when it is
// malformed; above all a "challenge" shaped as a digest is never signed.
func TestCertReqRefused(t *testing.T) {
	p := sharedPKI(t)
	digestInfo := append([]byte{0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20},
		sha256.New().Sum(nil)...)
	withTag := func(tag []byte) func(*Buffer) {
		return func(b *Buffer) {
			m := &Buffer{Protocol: "gsi", Step: StepCertReq}
			m.Add(BucketRandomTag, tag)
			set(b, BucketMain, m.Marshal())
		}
	}
	cases := []struct {
		name  string
		edit  func(*Buffer)
		known func(string) bool
		want  string
	}{
		{"a DigestInfo as the challenge", withTag(digestInfo), nil, "malformed random tag (51 bytes): refused to sign"},
		{"8 bytes outside the alphabet", withTag([]byte("AAAA\x00\x01\xff\xfe")), nil, "malformed random tag"},
		{"no challenge", withTag(nil), nil, "malformed random tag"},
		{"old client", func(b *Buffer) { set(b, BucketVersion, int32Bucket(10300)) }, nil, "version 10400 or later"},
		{"version of the wrong size", func(b *Buffer) { set(b, BucketVersion, []byte{1}) }, nil, "not an int32"},
		{"another crypto module", func(b *Buffer) { set(b, BucketCryptoMod, []byte("gcrypt")) }, nil, "crypto module \"gcrypt\" is not supported"},
		{"unknown CA", nil, func(string) bool { return false }, "unknown CA: cannot verify client credentials"},
		{"CA hash that is a path", func(b *Buffer) { set(b, BucketIssuerHash, []byte("../../etc/passwd")) },
			func(h string) bool { return h == "../../etc/passwd" || h == "../../etc/passwd.0" }, "unknown CA"},
		{"no main buffer", func(b *Buffer) { b.Buckets = b.Buckets[:len(b.Buckets)-1] }, nil, "main buffer is missing"},
		{"main buffer garbage", func(b *Buffer) { set(b, BucketMain, []byte("garbage")) }, nil, "main buffer: malformed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := p.server(t, func(cfg *Config) { cfg.KnownCA = c.known })
			m1, _ := p.client(t).Start(srv.Offer())
			if c.edit != nil {
				m1 = edit(t, m1, c.edit)
			}
			out, err := srv.Handshake().Step(context.Background(), m1)
			if err == nil || !strings.Contains(err.Error(), c.want) || out.Reply != nil {
				t.Errorf("got %v (reply %d bytes), want %q", err, len(out.Reply), c.want)
			}
		})
	}
}

// Steps out of order, repeated, late or unknown end the exchange.
func TestStepOrder(t *testing.T) {
	p := sharedPKI(t)
	ctx := context.Background()
	step := func(n int32) []byte { return (&Buffer{Protocol: "gsi", Step: n}).Marshal() }
	t.Run("1001 first", func(t *testing.T) {
		if _, err := p.server(t).Handshake().Step(ctx, step(StepCert)); err == nil || !strings.Contains(err.Error(), "came before") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("delegation", func(t *testing.T) {
		if _, err := p.server(t).Handshake().Step(ctx, step(StepSigPxy)); err == nil || !strings.Contains(err.Error(), "takes no delegation") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("unknown step", func(t *testing.T) {
		if _, err := p.server(t).Handshake().Step(ctx, step(2001)); err == nil || !strings.Contains(err.Error(), "unknown step 2001") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("another protocol", func(t *testing.T) {
		if _, err := p.server(t).Handshake().Step(ctx, (&Buffer{Protocol: "krb5", Step: 1000}).Marshal()); err == nil || !strings.Contains(err.Error(), "not gsi") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("too many starts", func(t *testing.T) {
		srv := p.server(t)
		h := srv.Handshake()
		m1, _ := p.client(t).Start(srv.Offer())
		for i := 1; i <= maxStarts+1; i++ {
			_, err := h.Step(ctx, m1)
			if (err != nil) != (i > maxStarts) {
				t.Errorf("start %d: %v", i, err)
			}
		}
	})
	t.Run("late", func(t *testing.T) {
		now := time.Now()
		srv := p.server(t, func(c *Config) { c.Now = func() time.Time { return now } })
		c := p.client(t)
		h := srv.Handshake()
		m1, _ := c.Start(srv.Offer())
		out, _ := h.Step(ctx, m1)
		m2, _ := c.Continue(out.Reply)
		now = now.Add(3 * time.Minute)
		if _, err := h.Step(ctx, m2); err == nil || !strings.Contains(err.Error(), "the exchange expired") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("garbage between the steps", func(t *testing.T) {
		srv := p.server(t)
		c := p.client(t)
		h := srv.Handshake()
		m1, _ := c.Start(srv.Offer())
		out, _ := h.Step(ctx, m1)
		m2, _ := c.Continue(out.Reply)
		if _, err := h.Step(ctx, []byte("gsi\x00garbage")); err == nil {
			t.Fatal("garbage taken")
		}
		if _, err := h.Step(ctx, m2); err == nil || !strings.Contains(err.Error(), "came before") {
			t.Errorf("the exchange went on after a refused step: %v", err)
		}
	})
}

// The client's choices must be among those offered.
func TestCertChoices(t *testing.T) {
	p := sharedPKI(t)
	cases := []struct {
		name string
		edit func(*Buffer)
		want string
	}{
		{"another cipher", func(b *Buffer) { set(b, BucketCipherAlg, []byte("bf-cbc#8")) }, "unsupported cipher \"bf-cbc\""},
		{"another IV length", func(b *Buffer) { set(b, BucketCipherAlg, []byte("aes-128-cbc#8")) }, "unsupported IV length \"8\""},
		{"another digest", func(b *Buffer) { set(b, BucketDigestAlg, []byte("md5")) }, "unsupported digest \"md5\""},
		{"no public key", func(b *Buffer) { set(b, BucketPublicKey, nil) }, "not a PEM PUBLIC KEY"},
		{"DH value garbage", func(b *Buffer) { set(b, BucketCipher, []byte("x")) }, "not signed with the key it sent"},
		{"main buffer truncated", func(b *Buffer) {
			m, _ := b.Get(BucketMain)
			set(b, BucketMain, m[:len(m)-5])
		}, "does not decrypt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := p.server(t)
			cl := p.client(t)
			h := srv.Handshake()
			m1, _ := cl.Start(srv.Offer())
			out, err := h.Step(context.Background(), m1)
			if err != nil {
				t.Fatal(err)
			}
			m2, _ := cl.Continue(out.Reply)
			if _, err := h.Step(context.Background(), edit(t, m2, c.edit)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// A step waiting for a computing slot gives up with its session.
func TestStepWaitsForSlot(t *testing.T) {
	p := sharedPKI(t)
	srv := p.server(t, func(c *Config) { c.Concurrency = 1 })
	srv.slots <- struct{}{} // every slot taken
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	m1, _ := p.client(t).Start(srv.Offer())
	if _, err := srv.Handshake().Step(ctx, m1); err == nil || !strings.Contains(err.Error(), "abandoned") {
		t.Errorf("got %v", err)
	}
	<-srv.slots
	if _, err := exchange(t, srv, p.client(t)); err != nil {
		t.Errorf("after the slot was freed: %v", err)
	}
}

// The verifier's refusal is the exchange's.
func TestVerifierRefuses(t *testing.T) {
	p := sharedPKI(t)
	if _, err := exchange(t, p.server(t), p.clientWith(t, p.chain()[:1], p.proxyKey)); err == nil || !strings.Contains(err.Error(), "not Alice's chain") {
		t.Errorf("got %v", err)
	}
}

// BenchmarkServerExchange is the server's share of one exchange (both
// steps, the chain check a stand-in), the client's work not timed.
func BenchmarkServerExchange(b *testing.B) {
	p := sharedPKI(b)
	srv := p.server(b)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		c := p.client(b)
		m1, _ := c.Start(srv.Offer())
		h := srv.Handshake()
		b.StartTimer()
		out, err := h.Step(ctx, m1)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		m2, err := c.Continue(out.Reply)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if out, err = h.Step(ctx, m2); err != nil || out.Identity == nil {
			b.Fatal(err)
		}
	}
}

// One DH key serves the exchanges of a while; an exchange that began
// with the last key ends with it after the next one is made.
func TestDHShareRotates(t *testing.T) {
	p := sharedPKI(t)
	now := time.Now()
	srv := p.server(t, func(c *Config) { c.Now = func() time.Time { return now } })
	ctx := context.Background()
	begin := func(c *Client) (*Handshake, []byte) {
		h := srv.Handshake()
		m1, _ := c.Start(srv.Offer())
		out, err := h.Step(ctx, m1)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := c.Continue(out.Reply)
		if err != nil {
			t.Fatal(err)
		}
		return h, m2
	}
	early, m2early := begin(p.client(t))
	first := srv.share
	if _, m2 := begin(p.client(t)); srv.share != first || m2 == nil {
		t.Errorf("a second exchange within %s made a new DH key", dhShareLifetime)
	}
	now = now.Add(dhShareLifetime)
	late, _ := begin(p.client(t))
	if srv.share == first || srv.share.key.y.Cmp(first.key.y) == 0 {
		t.Fatalf("no new DH key after %s", dhShareLifetime)
	}
	if out, err := early.Step(ctx, m2early); err != nil || out.Identity == nil {
		t.Errorf("the exchange begun with the last key: %v", err)
	}
	// A step answering the last key's exchange does not open under the new.
	if _, err := late.Step(ctx, m2early); err == nil || !strings.Contains(err.Error(), "does not decrypt") {
		t.Errorf("a step of the last key's exchange: %v", err)
	}
}
