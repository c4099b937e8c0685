package x509grid

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// slowest is how long one verification of hostile input may take on a
// busy test machine; real ones take a few milliseconds.
const slowest = 2 * time.Second

// refuse runs one verification of hostile input and requires a quick
// refusal wrapping want.
func refuse(t *testing.T, what string, want error, verify func() (*Result, error)) {
	t.Helper()
	start := time.Now()
	res, err := verify()
	if took := time.Since(start); took > slowest {
		t.Errorf("%s: took %v", what, took)
	}
	if err == nil {
		t.Errorf("%s: accepted as %s", what, res.Subject)
	} else if want != nil && !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
}

func TestHostileChains(t *testing.T) {
	fx := sharedFixture(t)
	v := fx.verifier(t)
	b := fx.scratch(t)
	vp := vomsProxyOf(fx, b, fx.Alice)
	b.OK(t)
	good := readPEM(t, vp.Chain)
	certs := loadCerts(t, vp.Chain)
	proxyDER, userDER := certs[0].Raw, certs[1].Raw
	if _, err := v.VerifyDER([][]byte{proxyDER, userDER}, time.Now()); err != nil {
		t.Fatalf("the untouched proxy: %v", err)
	}

	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 2, 16, 1000, 100000} {
		junk := make([]byte, n)
		rng.Read(junk)
		refuse(t, fmt.Sprintf("%d random bytes as DER", n), ErrMalformed, func() (*Result, error) { return v.VerifyDER([][]byte{junk}, time.Now()) })
		refuse(t, fmt.Sprintf("%d random bytes as PEM", n), nil, func() (*Result, error) { return v.VerifyPEM(junk, time.Now()) })
	}
	for n := 0; n < len(proxyDER); n += 7 {
		cut := proxyDER[:n]
		refuse(t, fmt.Sprintf("proxy truncated to %d bytes", n), nil, func() (*Result, error) { return v.VerifyDER([][]byte{cut, userDER}, time.Now()) })
	}
	for n := 0; n < len(good); n += 97 {
		cut := good[:n]
		res, err := v.VerifyPEM(cut, time.Now())
		if err == nil && res.Proxies > 0 {
			t.Errorf("PEM truncated to %d bytes: accepted with a proxy", n)
		}
	}
	refuse(t, "input over MaxInput", ErrMalformed, func() (*Result, error) { return v.VerifyPEM(bytes.Repeat(good, 300<<10/len(good)+1), time.Now()) })
	refuse(t, "13 certificates", ErrMalformed, func() (*Result, error) {
		chain := [][]byte{proxyDER}
		for range 12 {
			chain = append(chain, userDER)
		}
		return v.VerifyDER(chain, time.Now())
	})
	blocks := strings.Repeat("-----BEGIN X-----\n-----END X-----\n", 250<<10/34)
	refuse(t, "many empty PEM blocks", ErrMalformed, func() (*Result, error) { return v.VerifyPEM([]byte(blocks), time.Now()) })
	begins := strings.Repeat("-----BEGIN CERTIFICATE-----\n", 250<<10/28)
	refuse(t, "many unterminated PEM blocks", nil, func() (*Result, error) { return v.VerifyPEM([]byte(begins), time.Now()) })
	huge := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: make([]byte, 70<<10)})
	refuse(t, "a 70 KiB certificate", ErrMalformed, func() (*Result, error) { return v.VerifyPEM(huge, time.Now()) })
	small := fx.verifier(t, func(c *Config) { c.Limits.MaxCertSize = 1000 })
	refuse(t, "a VOMS proxy over MaxCertSize", ErrMalformed, func() (*Result, error) { return small.VerifyPEM(good, time.Now()) })
	refuse(t, "nil certificate", ErrMalformed, func() (*Result, error) { return v.Verify(nil, time.Now()) })
}

func TestHostileACs(t *testing.T) {
	fx := sharedFixture(t)
	v := fx.verifier(t)
	b := fx.scratch(t)
	vp := vomsProxyOf(fx, b, fx.Alice)
	b.OK(t)
	ac := firstAC(t, vp.Chain)
	check := func(what, file, wantText string) {
		t.Helper()
		start := time.Now()
		res, err := v.VerifyPEM(readPEM(t, file), time.Now())
		if took := time.Since(start); took > slowest {
			t.Errorf("%s: took %v", what, took)
		}
		if err != nil {
			t.Fatalf("%s: the chain is refused: %v", what, err)
		}
		if len(res.VOs) != 0 || len(res.RejectedACs) == 0 || !strings.Contains(res.RejectedACs[0].Error(), wantText) {
			t.Errorf("%s: VOs %v, refused %v; want refused saying %q", what, res.VOs, res.RejectedACs, wantText)
		}
	}
	nine := make([][]byte, 9)
	for i := range nine {
		nine[i] = ac
	}
	check("nine ACs", withVOMSExtension(t, b, vp.Chain, fx.Alice, wrapACs(t, nine...)), "9 attribute certificates (limit 8)")
	var many []string
	for i := range 300 {
		many = append(many, fmt.Sprintf("/testvo/g%d", i))
	}
	manyFQANs := resignedAC(t, vomsExtension(t, vp.Chain), fx.VOMS.Key, func(a *acParts) {
		a.Attributes = vomsAttributesDER(t, "testvo://voms.example.org:15000", many)
	})
	check("300 FQANs", withVOMSExtension(t, b, vp.Chain, fx.Alice, manyFQANs), "300 FQANs (limit 256)")
	long := resignedAC(t, vomsExtension(t, vp.Chain), fx.VOMS.Key, func(a *acParts) {
		a.Attributes = vomsAttributesDER(t, "testvo://voms.example.org:15000", []string{"/testvo/" + strings.Repeat("g", 600)})
	})
	check("a 600-byte FQAN", withVOMSExtension(t, b, vp.Chain, fx.Alice, long), "limit 512")
	noAuthority := resignedAC(t, vomsExtension(t, vp.Chain), fx.VOMS.Key, func(a *acParts) {
		a.Attributes = vomsAttributesDER(t, "voms.example.org:15000", []string{"/testvo"})
	})
	check("no VO in the policy authority", withVOMSExtension(t, b, vp.Chain, fx.Alice, noAuthority), "is not <vo>://<host>:<port>")
	for n := 0; n < len(ac); n += 13 {
		cut := wrapACs(t, ac[:n])
		check(fmt.Sprintf("AC truncated to %d bytes", n), withVOMSExtension(t, b, vp.Chain, fx.Alice, cut), "")
	}
	check("garbage extension", withVOMSExtension(t, b, vp.Chain, fx.Alice, []byte{0x30, 0x03, 0x02, 0x01, 0x00}), "")
}

// The empty name hashes as OpenSSL does: SHA-1 of nothing.
func TestEmptyNameHash(t *testing.T) {
	h, err := SubjectHash([]byte{0x30, 0x00})
	sum := sha1.Sum(nil)
	if err != nil || h != binary.LittleEndian.Uint32(sum[:4]) {
		t.Errorf("%08x %v", h, err)
	}
}
