package webdav

import (
	"fmt"
	"hash/adler32"
	"strings"
	"testing"
)

func TestPropfindSelected(t *testing.T) {
	srv, dir := newServer(t, Config{})
	data := []byte("checksummed data")
	writeFile(t, dir, "d/f", data)
	tests := []struct {
		name, path, body string
		want, notWant    []string
	}{
		{
			name: "prop with checksum",
			path: "/store/d/f",
			body: `<D:propfind xmlns:D="DAV:" xmlns:c="http://www.dcache.org/2013/webdav"><D:prop><D:getcontentlength/><c:Checksums/><D:nosuch/></D:prop></D:propfind>`,
			want: []string{`<getcontentlength xmlns="DAV:">16</getcontentlength>`,
				fmt.Sprintf(`adler32=%08x</Checksums>`, adler32.Checksum(data)),
				`<nosuch xmlns="DAV:"></nosuch></prop><status>HTTP/1.1 404 Not Found`},
			notWant: []string{"getlastmodified"},
		},
		{
			name: "propname",
			path: "/store/d/",
			body: `<D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>`,
			want: []string{`<getetag xmlns="DAV:"></getetag>`, `<resourcetype xmlns="DAV:"></resourcetype>`},
		},
		{
			name: "resourcetype of a collection",
			path: "/store/d/",
			body: `<D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/></D:prop></D:propfind>`,
			want: []string{`<collection xmlns="DAV:"/>`, `<href>/store/d/f</href>`},
		},
		{
			name: "allprop keeps the full set",
			path: "/store/d/f",
			body: `<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`,
			want: []string{"<D:getlastmodified>", "<D:getcontentlength>16<"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, "PROPFIND", srv.URL+tc.path, strings.NewReader(tc.body), "Depth", "1")
			if resp.StatusCode != 207 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("answer lacks %q:\n%s", w, body)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(body, w) {
					t.Errorf("answer has %q:\n%s", w, body)
				}
			}
		})
	}
	resp, body := do(t, "PROPFIND", srv.URL+"/store/d/f", strings.NewReader(`<D:propfind xmlns:D="DAV:"><D:prop><x:y xmlns:x=""/></D:prop></D:propfind>`), "Depth", "0")
	if resp.StatusCode != 400 {
		t.Errorf("empty namespace binding: %d %s, want 400", resp.StatusCode, body)
	}
}

func TestEncodedSlashRefused(t *testing.T) {
	srv, dir := newServer(t, Config{})
	writeFile(t, dir, "a/b", []byte("x"))
	for _, p := range []string{"/store/a%2Fb", "/store/a%2fb"} {
		resp, body := do(t, "GET", srv.URL+p, nil)
		if resp.StatusCode != 400 || !strings.Contains(body, "%2F") {
			t.Errorf("GET %s: %d %q, want 400 naming %%2F", p, resp.StatusCode, body)
		}
	}
	resp, body := do(t, "MOVE", srv.URL+"/store/a/b", nil, "Destination", "/store/a%2Fc")
	if resp.StatusCode != 400 {
		t.Errorf("MOVE to a%%2Fc: %d %q, want 400", resp.StatusCode, body)
	}
}
