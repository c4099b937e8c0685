// Package web is the box's dashboard: one page, served by the box itself
// on its https:// port, that polls a JSON snapshot of the box (transfer
// rates, cache, federation, jobs) and draws it with plain JavaScript. The
// page and its assets are embedded in the binary and load nothing from
// elsewhere, so it works on a site network with no way out.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// Prefix is where the dashboard lives on the box's https:// port. It is
// under the director's "/.sitebox/" API subtree, which no namespace path
// can start with; the longer pattern wins in http.ServeMux.
const Prefix = "/.sitebox/dashboard/"

// SnapshotPath is the JSON the page polls.
const SnapshotPath = Prefix + "api/snapshot"

//go:embed static
var static embed.FS

// asset is an embedded file with its type fixed here: the system's MIME
// tables differ between distributions, and a script served as
// text/plain is refused under nosniff.
type asset struct {
	name, ctype string
	body        []byte
	etag        string
}

var assetTypes = map[string]string{
	"index.html":    "text/html; charset=utf-8",
	"app.js":        "text/javascript; charset=utf-8",
	"federation.js": "text/javascript; charset=utf-8",
	"style.css":     "text/css; charset=utf-8",
}

// csp lets the page load only its own script, style and snapshot: the
// snapshot carries client-chosen strings (file names), and even if one
// slipped into markup it could not run or call out.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the dashboard below Prefix:
//
//	GET /.sitebox/dashboard/              the page
//	GET /.sitebox/dashboard/app.js        its script (and style.css)
//	GET /.sitebox/dashboard/api/snapshot  JSON Snapshot, rates from rec
//
// rec may be nil (no rate history). The snapshot shows file names and
// user subjects only to a request v says is an operator's (v nil: to
// nobody). A valid identity that is no operator gets what an anonymous
// visitor gets, with the reason the names stay hidden: a user's token
// sent along with the request takes nothing away. A request whose token
// v refuses gets 401 with the reason. Any other path below Prefix is
// 404, any other method 405.
func Handler(src Source, rec *Recorder, v Viewer) http.Handler {
	mux := http.NewServeMux()
	for name, ctype := range assetTypes {
		body, err := static.ReadFile("static/" + name)
		if err != nil {
			panic("web: embedded asset missing: " + name) // a build mistake, caught by the tests
		}
		sum := sha256.Sum256(body)
		a := &asset{name: name, ctype: ctype, body: body, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		pattern := "GET " + Prefix + name
		if name == "index.html" {
			pattern = "GET " + Prefix + "{$}"
		}
		mux.Handle(pattern, a)
	}
	mux.HandleFunc("GET "+SnapshotPath, func(w http.ResponseWriter, r *http.Request) {
		operator, hiddenWhy := "", ""
		if v != nil {
			var err error
			operator, err = v.Operator(r)
			switch {
			case errors.Is(err, ErrNotOperator):
				operator, hiddenWhy = "", err.Error()
			case err != nil:
				refuse(w, err)
				return
			}
		}
		snap := src.Snapshot()
		if operator == "" {
			snap.hideNames()
			snap.NamesHiddenWhy = hiddenWhy
		}
		snap.Operator = operator
		if rec != nil {
			snap.Transfers.Rates = rec.Rates()
		} else {
			snap.Transfers.Rates = Rates{Times: []int64{}, Series: map[string][]float64{}}
		}
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(snap); err != nil {
			http.Error(w, "dashboard snapshot: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(buf.Bytes())
	})
	// GET-only, so that another method on a known path is 405 (the mux
	// finds a pattern for the path, not the method) and any other path 404.
	mux.HandleFunc("GET "+Prefix, http.NotFound)
	return secure(mux)
}

// refuse answers a snapshot request whose token is refused, with the
// reason as JSON for the page to show.
func refuse(w http.ResponseWriter, err error) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="sitebox dashboard", error="invalid_token"`)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusUnauthorized)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// ServeHTTP sends the asset, answering revalidations with 304: browsers
// check on every load (no-cache) so an upgraded box serves its new page.
func (a *asset) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", a.ctype)
	w.Header().Set("ETag", a.etag)
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.body))
}

// secure adds the headers every dashboard response carries.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}
