package webdav

import (
	"bytes"
	"context"
	"encoding/xml"
	"net/http"
	"path"
	"strconv"
	"time"

	"sitebox/internal/store"
)

// A PROPFIND body may ask for all properties (allprop, also an empty
// body), their names only (propname), or named properties (prop). The
// last two are answered here; allprop by propfind.go's fixed set.

// ChecksumProp is the property dCache serves a file's checksums in,
// "adler32=<8 hex>"; it is computed only when asked for by name.
var checksumProp = xml.Name{Space: "http://www.dcache.org/2013/webdav", Local: "Checksums"}

// liveNames are the properties propname lists and prop can ask for.
var liveNames = []xml.Name{
	{Space: "DAV:", Local: "displayname"},
	{Space: "DAV:", Local: "getcontentlength"},
	{Space: "DAV:", Local: "getcontenttype"},
	{Space: "DAV:", Local: "getlastmodified"},
	{Space: "DAV:", Local: "creationdate"},
	{Space: "DAV:", Local: "resourcetype"},
	{Space: "DAV:", Local: "getetag"},
	checksumProp,
}

// propRequest is a parsed PROPFIND body; the zero value is allprop.
type propRequest struct {
	propname bool
	names    []xml.Name
}

func (p propRequest) allprop() bool { return !p.propname && p.names == nil }

// parsePropRequest reads an already well-formed DAV:propfind body.
func parsePropRequest(body []byte) (propRequest, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return propRequest{}, nil
	}
	var doc struct {
		Propname *struct{} `xml:"DAV: propname"`
		Prop     *struct {
			Any []struct {
				XMLName xml.Name
			} `xml:",any"`
		} `xml:"DAV: prop"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		return propRequest{}, badRequest("PROPFIND body: " + err.Error())
	}
	switch {
	case doc.Propname != nil:
		return propRequest{propname: true}, nil
	case doc.Prop != nil:
		req := propRequest{names: []xml.Name{}}
		for _, a := range doc.Prop.Any {
			req.names = append(req.names, a.XMLName)
		}
		return req, nil
	}
	return propRequest{}, nil
}

type selMultistatus struct {
	XMLName   xml.Name      `xml:"DAV: multistatus"`
	Responses []selResponse `xml:"response"`
}

type selResponse struct {
	Href      string        `xml:"href"`
	Propstats []selPropstat `xml:"propstat"`
}

type selPropstat struct {
	Props  []anyProp `xml:"prop>any"`
	Status string    `xml:"status"`
}

// anyProp is one property with its (text or XML) value.
type anyProp struct {
	XMLName xml.Name
	Text    string `xml:",chardata"`
	Inner   string `xml:",innerxml"`
}

// selectedResponse answers req for one entry: the properties it has with
// 200, the others with 404 (RFC 4918 section 9.1).
func (h *Handler) selectedResponse(ctx context.Context, name string, fi store.FileInfo, req propRequest) selResponse {
	href := escapePath(name)
	if fi.IsDir() && href != "/" {
		href += "/"
	}
	resp := selResponse{Href: href}
	if req.propname {
		var names []anyProp
		for _, n := range liveNames {
			names = append(names, anyProp{XMLName: n})
		}
		resp.Propstats = []selPropstat{{Props: names, Status: "HTTP/1.1 200 OK"}}
		return resp
	}
	var found, missing []anyProp
	for _, n := range req.names {
		if p, ok := h.liveProp(ctx, name, fi, n); ok {
			found = append(found, p)
		} else {
			missing = append(missing, anyProp{XMLName: n})
		}
	}
	if len(found) > 0 {
		resp.Propstats = append(resp.Propstats, selPropstat{Props: found, Status: "HTTP/1.1 200 OK"})
	}
	if len(missing) > 0 {
		resp.Propstats = append(resp.Propstats, selPropstat{Props: missing, Status: "HTTP/1.1 404 Not Found"})
	}
	return resp
}

// liveProp is one property of an entry, if it has it.
func (h *Handler) liveProp(ctx context.Context, name string, fi store.FileInfo, n xml.Name) (anyProp, bool) {
	p := anyProp{XMLName: n}
	if n == checksumProp {
		if fi.IsDir() {
			return p, false
		}
		p.Text = h.checksums(ctx, name)
		return p, p.Text != ""
	}
	if n.Space != "DAV:" {
		return p, false
	}
	switch n.Local {
	case "displayname":
		if name != "/" {
			p.Text = path.Base(name)
		}
	case "getcontentlength": // a collection's too (see propResponse)
		p.Text = strconv.FormatInt(fi.Size, 10)
	case "getcontenttype":
		if fi.IsDir() {
			return p, false
		}
		p.Text = "application/octet-stream"
	case "getlastmodified":
		p.Text = fi.ModTime.UTC().Format(http.TimeFormat)
	case "creationdate":
		p.Text = fi.ModTime.UTC().Format(time.RFC3339)
	case "resourcetype":
		if fi.IsDir() {
			p.Inner = `<collection xmlns="DAV:"/>`
		}
	case "getetag":
		p.Text = etag(fi)
	default:
		return p, false
	}
	return p, true
}
