package webdav

import (
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"hash/adler32"
	"net/http/httptest"
	"strings"
	"testing"

	"sitebox/internal/cksum"
	"sitebox/internal/origin"
)

// TestMD5Offered: where md5 is offered, Want-Digest: md5 is answered in
// base64 (RFC 3230) and dCache's Checksums property lists it after
// adler32; where it is not, neither mentions it.
func TestMD5Offered(t *testing.T) {
	data := testData()
	md := md5.Sum(data)
	md5Digest := "md5=" + base64.StdEncoding.EncodeToString(md[:])
	ad := fmt.Sprintf("adler32=%08x", adler32.Checksum(data))
	checksums := `<propfind xmlns="DAV:"><prop><C:Checksums xmlns:C="http://www.dcache.org/2013/webdav"/></prop></propfind>`
	for _, tc := range []struct {
		name                  string
		extra                 []string
		digest, md5First, all string
	}{
		{"md5 offered", []string{"md5"}, md5Digest, md5Digest, ad + "," + md5Digest},
		{"md5 not offered", nil, "", ad, ad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			offered, err := cksum.NewOffered(tc.extra)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}, Checksums: offered}, nil)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(New(Config{}, o, nil))
			t.Cleanup(func() { srv.Close(); o.Close() })
			writeFile(t, dir, "f", data)
			for want, digest := range map[string]string{"md5": tc.digest, "MD5, adler32": tc.md5First} {
				if resp, _ := do(t, "HEAD", srv.URL+"/store/f", nil, "Want-Digest", want); resp.Header.Get("Digest") != digest {
					t.Errorf("Want-Digest: %s: Digest %q, want %q", want, resp.Header.Get("Digest"), digest)
				}
			}
			_, body := do(t, "PROPFIND", srv.URL+"/store/f", strings.NewReader(checksums), "Depth", "0")
			if !strings.Contains(body, ">"+tc.all+"<") {
				t.Errorf("Checksums property: %s\nwant %s", body, tc.all)
			}
		})
	}
}
