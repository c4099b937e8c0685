package webdav

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/store"
)

// maxPropfindBody bounds the request body: a propfind document is small.
const maxPropfindBody = 64 << 10

// propfind answers depth 0 and 1 with the live properties grid clients
// (davix, gfal, curl scripts) read: displayname, size, mtime, type and
// ETag. allprop (or no body) gets them all; propname and prop are
// answered by propsel.go. Depth infinity is refused (RFC 4918
// propfind-finite-depth); a missing Depth means 1, as most clients intend.
func (h *Handler) propfind(w http.ResponseWriter, r *http.Request, name string) error {
	depth := strings.ToLower(strings.TrimSpace(r.Header.Get("Depth")))
	switch depth {
	case "0", "1":
	case "":
		depth = "1"
	case "infinity":
		return &httpError{http.StatusForbidden, "PROPFIND with Depth: infinity is not supported; use Depth 0 or 1"}
	default:
		return badRequest("bad Depth header " + strconv.Quote(depth) + "; use 0 or 1")
	}
	req, err := checkPropfindBody(r)
	if err != nil {
		return err
	}
	if answered, err := h.route(w, r, store.Call{Op: "stat", Path: name}); answered || err != nil {
		return err
	}
	fi, err := h.store.Stat(r.Context(), name)
	if err != nil {
		return err
	}
	all := []store.FileInfo{fi}
	names := []string{name}
	if depth == "1" && fi.IsDir() {
		entries, err := h.store.List(r.Context(), name)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !hidden(e.Name) {
				all, names = append(all, e), append(names, path.Join(name, e.Name))
			}
		}
	}
	var doc any
	if req.allprop() {
		ms := multistatus{DAV: "DAV:"}
		for i := range all {
			ms.Responses = append(ms.Responses, propResponse(names[i], all[i]))
		}
		doc = ms
	} else { // propsel.go
		ms := selMultistatus{}
		for i := range all {
			ms.Responses = append(ms.Responses, h.selectedResponse(r.Context(), names[i], all[i], req))
		}
		doc = ms
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	if err := xml.NewEncoder(&b).Encode(doc); err != nil {
		return err
	}
	b.WriteByte('\n')
	w.Header().Set("Content-Type", `application/xml; charset="utf-8"`)
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusMultiStatus)
	if _, err := w.Write(b.Bytes()); err != nil {
		h.log.Debug("propfind answer not delivered", "path", name, "err", err)
	}
	return nil
}

// checkPropfindBody reads the (optional) request body and refuses one that
// is not a well-formed XML document (RFC 4918 section 9.1: 400).
func checkPropfindBody(r *http.Request) (propRequest, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPropfindBody+1))
	if err != nil {
		return propRequest{}, &clientBodyError{err}
	}
	if len(body) > maxPropfindBody {
		return propRequest{}, &httpError{http.StatusRequestEntityTooLarge, "PROPFIND body larger than 64 KiB"}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return propRequest{}, nil
	}
	if err := checkNamespaces(body); err != nil {
		return propRequest{}, err
	}
	var doc struct {
		XMLName xml.Name
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		return propRequest{}, badRequest("PROPFIND body is not well-formed XML: " + err.Error())
	}
	if doc.XMLName.Space != "DAV:" || doc.XMLName.Local != "propfind" {
		return propRequest{}, badRequest("PROPFIND body must be a DAV: propfind element")
	}
	return parsePropRequest(body)
}

type multistatus struct {
	XMLName   xml.Name   `xml:"D:multistatus"`
	DAV       string     `xml:"xmlns:D,attr"`
	Responses []response `xml:"D:response"`
}

type response struct {
	Href     string   `xml:"D:href"`
	Propstat propstat `xml:"D:propstat"`
}

type propstat struct {
	Prop   prop   `xml:"D:prop"`
	Status string `xml:"D:status"`
}

type prop struct {
	DisplayName   string       `xml:"D:displayname"`
	ContentLength *int64       `xml:"D:getcontentlength,omitempty"`
	ContentType   string       `xml:"D:getcontenttype,omitempty"`
	LastModified  string       `xml:"D:getlastmodified"`
	CreationDate  string       `xml:"D:creationdate"`
	ResourceType  resourceType `xml:"D:resourcetype"`
	ETag          string       `xml:"D:getetag,omitempty"`
}

type resourceType struct {
	Collection *struct{} `xml:"D:collection,omitempty"`
}

// propResponse describes one entry. Collections get a trailing slash on
// their href, as davix and gfal expect when they list, and the size of
// their directory as getcontentlength, as XrdHttp sends it: gfal-ls -l
// shows it as it shows a directory's size for a local one.
func propResponse(name string, fi store.FileInfo) response {
	href := escapePath(name)
	size := fi.Size
	p := prop{
		DisplayName:   path.Base(name),
		ContentLength: &size,
		LastModified:  fi.ModTime.UTC().Format(http.TimeFormat),
		CreationDate:  fi.ModTime.UTC().Format(time.RFC3339),
		ETag:          etag(fi),
	}
	if name == "/" {
		p.DisplayName = ""
	}
	if fi.IsDir() {
		p.ResourceType.Collection = &struct{}{}
		if href != "/" {
			href += "/"
		}
	} else {
		p.ContentType = "application/octet-stream"
	}
	return response{Href: href, Propstat: propstat{Prop: p, Status: "HTTP/1.1 200 OK"}}
}

// checkNamespaces refuses a prefix bound to the empty namespace name
// (xmlns:p=""), which XML Namespaces 1.0 forbids and encoding/xml lets
// through.
func checkNamespaces(body []byte) error {
	d := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return badRequest("PROPFIND body is not well-formed XML: " + err.Error())
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Space == "xmlns" && a.Value == "" {
					return badRequest("PROPFIND body binds prefix " + a.Name.Local + " to an empty namespace")
				}
			}
		}
	}
}
