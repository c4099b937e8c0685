package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
)

// Registry is what the admin API needs from the director: removing a
// server that went down for good (a down server stays listed until an
// operator says so). *director.Director implements it.
type Registry interface {
	Remove(name string) bool
}

// errNoDirector answers the federation endpoints on a box without the
// director role.
var errNoDirector = errors.New("this box runs no director")

// maxNameLen bounds a server name in a request.
const maxNameLen = 256

// WithRegistry serves POST /federation/remove?name=NAME for r; nil (or a
// nil pointer) leaves the endpoint answering 404. Call it before serving.
func (s *Server) WithRegistry(r Registry) {
	if v := reflect.ValueOf(r); r == nil || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return
	}
	s.registry = r
}

func (s *Server) removeServer(w http.ResponseWriter, r *http.Request) {
	if s.registry == nil {
		writeError(w, http.StatusNotFound, errNoDirector)
		return
	}
	name := r.URL.Query().Get("name")
	if name == "" || len(name) > maxNameLen {
		writeError(w, http.StatusBadRequest, fmt.Errorf("name=%.40q: give the server's name as `sitebox federation` lists it", name))
		return
	}
	if !s.registry.Remove(name) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no server %q in the director's registry", name))
		return
	}
	s.log.Info("server removed from the registry", "name", name)
	writeJSON(w, http.StatusOK, map[string]string{"removed": name})
}

// RemoveServer asks the box's director to forget a server.
func (c *Client) RemoveServer(ctx context.Context, name string) error {
	var res map[string]string
	return c.do(ctx, http.MethodPost, "/federation/remove", url.Values{"name": {name}}, &res)
}
