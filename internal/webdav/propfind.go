package webdav

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"time"

	"sitebox/internal/store"
)

// maxPropfindBody bounds the request body read (its contents are not needed:
// all live properties are returned, as allprop).
const maxPropfindBody = 64 << 10

// propfind answers depth 0 and 1 with the live properties grid clients
// read: size, mtime, type and ETag. Depth infinity is refused (RFC 4918
// propfind-finite-depth).
func (h *Handler) propfind(w http.ResponseWriter, r *http.Request, name string) error {
	depth := r.Header.Get("Depth")
	switch depth {
	case "0", "1":
	case "", "infinity":
		if depth == "infinity" {
			return &httpError{http.StatusForbidden, "PROPFIND with Depth: infinity is not supported; use 0 or 1"}
		}
		depth = "1"
	default:
		return &httpError{http.StatusBadRequest, "bad Depth header " + strconv.Quote(depth)}
	}
	io.Copy(io.Discard, io.LimitReader(r.Body, maxPropfindBody))
	fi, err := h.store.Stat(r.Context(), name)
	if err != nil {
		return err
	}
	ms := multistatus{DAV: "DAV:", Responses: []response{propResponse(name, fi)}}
	if depth == "1" && fi.IsDir() {
		entries, err := h.store.List(r.Context(), name)
		if err != nil {
			return err
		}
		for _, e := range entries {
			ms.Responses = append(ms.Responses, propResponse(path.Join(name, e.Name), e))
		}
	}
	w.Header().Set("Content-Type", `application/xml; charset="utf-8"`)
	w.WriteHeader(http.StatusMultiStatus)
	io.WriteString(w, xml.Header)
	return xml.NewEncoder(w).Encode(ms)
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
	LastModified  string       `xml:"D:getlastmodified"`
	CreationDate  string       `xml:"D:creationdate"`
	ResourceType  resourceType `xml:"D:resourcetype"`
	ETag          string       `xml:"D:getetag,omitempty"`
	Executable    string       `xml:"D:executable,omitempty"`
}

type resourceType struct {
	Collection *struct{} `xml:"D:collection,omitempty"`
}

func propResponse(name string, fi store.FileInfo) response {
	href := (&url.URL{Path: name}).EscapedPath()
	p := prop{
		DisplayName:  path.Base(name),
		LastModified: fi.ModTime.UTC().Format(http.TimeFormat),
		CreationDate: fi.ModTime.UTC().Format(time.RFC3339),
	}
	if fi.IsDir() {
		p.ResourceType.Collection = &struct{}{}
		if href != "/" {
			href += "/"
		}
	} else {
		size := fi.Size
		p.ContentLength = &size
		p.ETag = etag(fi)
	}
	return response{Href: href, Propstat: propstat{Prop: p, Status: "HTTP/1.1 200 OK"}}
}
