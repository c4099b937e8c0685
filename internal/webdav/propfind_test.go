package webdav

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
)

// davResponse is what a client like davix reads from a multistatus.
type davResponse struct {
	Href  string `xml:"href"`
	Props struct {
		DisplayName   string    `xml:"displayname"`
		ContentLength string    `xml:"getcontentlength"`
		LastModified  string    `xml:"getlastmodified"`
		ETag          string    `xml:"getetag"`
		Collection    *xml.Name `xml:"resourcetype>collection"`
	} `xml:"propstat>prop"`
	Status string `xml:"propstat>status"`
}

func parseMultistatus(t *testing.T, body string) []davResponse {
	t.Helper()
	var ms struct {
		XMLName   xml.Name      `xml:"DAV: multistatus"`
		Responses []davResponse `xml:"DAV: response"`
	}
	if err := xml.Unmarshal([]byte(body), &ms); err != nil {
		t.Fatalf("multistatus does not parse: %v\n%s", err, body)
	}
	return ms.Responses
}

func TestPropfind(t *testing.T) {
	srv, dir := newServer(t, Config{})
	writeFile(t, dir, "d/f1", []byte("hello"))
	writeFile(t, dir, "d/sub/x", nil)
	writeFile(t, dir, "d/"+uploadPrefix+"1", nil)
	allprop := `<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`
	someprop := `<propfind xmlns="DAV:"><prop><getcontentlength/><resourcetype/></prop></propfind>`
	for _, tc := range []struct {
		name, path, depth, body string
		status                  int
		hrefs                   []string
	}{
		{"dir depth 1", "/store/d", "1", "", 207, []string{"/store/d/", "/store/d/f1", "/store/d/sub/"}},
		{"dir depth 0", "/store/d/", "0", allprop, 207, []string{"/store/d/"}},
		{"file depth 1", "/store/d/f1", "1", someprop, 207, []string{"/store/d/f1"}},
		{"no depth means 1", "/store/d", "", "", 207, []string{"/store/d/", "/store/d/f1", "/store/d/sub/"}},
		{"root", "/", "1", "", 207, []string{"/", "/store/"}},
		{"infinity", "/store/d", "infinity", "", 403, nil},
		{"bad depth", "/store/d", "2", "", 400, nil},
		{"missing", "/store/nope", "0", "", 404, nil},
		{"bad xml", "/store/d", "0", "<propfind", 400, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := []string{"Content-Type", "application/xml"}
			if tc.depth != "" {
				hdr = append(hdr, "Depth", tc.depth)
			}
			resp, body := do(t, "PROPFIND", srv.URL+tc.path, strings.NewReader(tc.body), hdr...)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status != 207 {
				return
			}
			var hrefs []string
			for _, r := range parseMultistatus(t, body) {
				hrefs = append(hrefs, r.Href)
			}
			if strings.Join(hrefs, " ") != strings.Join(tc.hrefs, " ") {
				t.Fatalf("hrefs %q, want %q", hrefs, tc.hrefs)
			}
		})
	}
	_, body := do(t, "PROPFIND", srv.URL+"/store/d", nil, "Depth", "1")
	rs := parseMultistatus(t, body)
	dirp, file := rs[0], rs[1]
	if dirp.Props.Collection == nil || dirp.Props.DisplayName != "d" || dirp.Status != "HTTP/1.1 200 OK" || dirp.Props.ContentLength == "" {
		t.Errorf("directory props: %+v", dirp)
	}
	if file.Props.Collection != nil || file.Props.ContentLength != "5" || file.Props.DisplayName != "f1" || file.Props.ETag == "" {
		t.Errorf("file props: %+v", file)
	}
	if _, err := http.ParseTime(file.Props.LastModified); err != nil {
		t.Errorf("getlastmodified %q: %v", file.Props.LastModified, err)
	}
	resp, _ := do(t, "HEAD", srv.URL+"/store/d/f1", nil)
	if resp.Header.Get("ETag") != file.Props.ETag {
		t.Errorf("PROPFIND etag %s, HEAD etag %s", file.Props.ETag, resp.Header.Get("ETag"))
	}
}

// TestPropfindHrefs: hrefs escape what RFC 3986 requires in a path and
// nothing more, so clients that show them as they come (davix, gfal2)
// show names with sub-delims as they are.
func TestPropfindHrefs(t *testing.T) {
	srv, dir := newServer(t, Config{})
	names := map[string]string{ // name → its href's last segment
		"it's (1)!*.txt":  "it's%20(1)!*.txt",
		"a+b,c;d=e&f$g":   "a+b,c;d=e&f$g",
		"x:y@z~_-.txt":    "x:y@z~_-.txt",
		"bü 100%.txt":     "b%C3%BC%20100%25.txt",
		"q?h#[b]{c}|^`\\": "q%3Fh%23%5Bb%5D%7Bc%7D%7C%5E%60%5C",
		`"<>`:             "%22%3C%3E",
	}
	for n := range names {
		writeFile(t, dir, "h/"+n, []byte("x"))
	}
	_, body := do(t, "PROPFIND", srv.URL+"/store/h", nil, "Depth", "1")
	got := map[string]bool{}
	for _, r := range parseMultistatus(t, body) {
		got[r.Href] = true
	}
	for n, seg := range names {
		if !got["/store/h/"+seg] {
			t.Errorf("%q: no href /store/h/%s in %v", n, seg, got)
		}
		// The href leads back to the file.
		if resp, _ := do(t, "HEAD", srv.URL+"/store/h/"+seg, nil); resp.StatusCode != 200 {
			t.Errorf("HEAD of the href of %q: %d", n, resp.StatusCode)
		}
	}
}
