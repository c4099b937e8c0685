package director

import (
	"encoding/json"
	"net/http"
	"time"

	"sitebox/internal/fleet"
)

// APIPrefix is where the director's HTTP API lives on its https:// port,
// next to the namespace (no namespace path starts with it).
const APIPrefix = fleet.APIPrefix

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
//	POST /.sitebox/advertise   JSON Ad signed by a member (Sitebox-Member,
//	                           Sitebox-Seq, Sitebox-Signature) → 204; else
//	                           400/401/403/413/503 with the reason
//	GET  /.sitebox/federation  JSON Federation
func (d *Director) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+APIPrefix+"advertise", d.serveAdvertise)
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
