package director

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"sitebox/internal/store"
)

// APIPrefix is where the director's HTTP API lives on its https:// port,
// next to the namespace (no namespace path starts with it).
const APIPrefix = "/.sitebox/"

// Federation is the director's view for `sitebox federation`.
type Federation struct {
	Name    string    `json:"name"`
	Site    string    `json:"site"`
	Parents []string  `json:"parents,omitempty"`
	VOs     []string  `json:"vos,omitempty"`
	Now     time.Time `json:"now"`
	Servers []Server  `json:"servers"`
}

// Handler serves the API:
//
//	POST /.sitebox/advertise   JSON Ad → 204; 400 with a message if bad
//	GET  /.sitebox/federation  JSON Federation
func (d *Director) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+APIPrefix+"advertise", func(w http.ResponseWriter, r *http.Request) {
		var ad Ad
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ad); err != nil {
			http.Error(w, "advertisement: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := d.Advertise(ad); err != nil {
			code := http.StatusInternalServerError
			if errors.Is(err, store.ErrInvalid) {
				code = http.StatusBadRequest
			}
			http.Error(w, "advertisement: "+err.Error(), code)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET "+APIPrefix+"matrix", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(d.Matrix())
	})
	mux.HandleFunc("GET "+APIPrefix+"federation", func(w http.ResponseWriter, r *http.Request) {
		f := Federation{Name: d.cfg.Name, Site: d.cfg.Site, Now: time.Now(), Servers: d.Servers()}
		for _, p := range d.cfg.Parents {
			f.Parents = append(f.Parents, "root://"+p.Root)
		}
		for vo := range d.cfg.VO {
			f.VOs = append(f.VOs, vo)
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(f)
	})
	return mux
}
