package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, h http.Handler, method, path string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func emptySource() Source {
	return SourceFunc(func() Snapshot {
		return Snapshot{Box: BoxInfo{Name: "t3-box", Site: "UNIGE", Version: "dev", Roles: []string{"origin"}}}
	})
}

func TestHandlerServesAssets(t *testing.T) {
	h := Handler(emptySource(), nil, nil)
	tests := []struct {
		name, path, ctype, contains string
	}{
		{"page", Prefix, "text/html; charset=utf-8", `<script src="app.js" defer></script>`},
		{"script", Prefix + "app.js", "text/javascript; charset=utf-8", "api/snapshot"},
		{"style", Prefix + "style.css", "text/css; charset=utf-8", ".card"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := get(t, h, "GET", tc.path)
			if r.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %s", tc.path, r.Status)
			}
			if got := r.Header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type %q; want %q", got, tc.ctype)
			}
			if !strings.Contains(body(t, r), tc.contains) {
				t.Errorf("body lacks %q", tc.contains)
			}
			for _, k := range []string{"Content-Security-Policy", "X-Content-Type-Options", "ETag"} {
				if r.Header.Get(k) == "" {
					t.Errorf("no %s header", k)
				}
			}
			// A browser revalidating an unchanged asset gets 304.
			if r2 := get(t, h, "GET", tc.path, "If-None-Match", r.Header.Get("ETag")); r2.StatusCode != http.StatusNotModified {
				t.Errorf("revalidation: %s; want 304", r2.Status)
			}
		})
	}
}

// The page references nothing outside the box: no http(s) URL in any
// asset (a site network may have no way out).
func TestAssetsAreSelfContained(t *testing.T) {
	for name := range assetTypes {
		b, err := static.ReadFile("static/" + name)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(b), "http://www.w3.org/2000/svg", "")
		if i := strings.Index(s, "http"); i >= 0 && strings.Contains(s[i:min(len(s), i+8)], "://") {
			t.Errorf("%s refers to an external URL near %q", name, s[i:min(len(s), i+40)])
		}
	}
}

func TestHandlerNotFoundAndMethods(t *testing.T) {
	h := Handler(emptySource(), nil, nil)
	tests := []struct {
		name, method, path string
		want               int
	}{
		{"unknown asset", "GET", Prefix + "nope.js", 404},
		{"embedded dir is not exposed", "GET", Prefix + "static/app.js", 404},
		{"unknown api", "GET", Prefix + "api/other", 404},
		{"index by name", "GET", Prefix + "index.html", 404},
		{"post snapshot", "POST", SnapshotPath, 405},
		{"delete page", "DELETE", Prefix, 405},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := get(t, h, tc.method, tc.path); r.StatusCode != tc.want {
				t.Fatalf("%s %s: %s; want %d", tc.method, tc.path, r.Status, tc.want)
			}
		})
	}
}

func TestSnapshotJSON(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	src := SourceFunc(func() Snapshot {
		return Snapshot{
			Box: BoxInfo{Name: "t3-box", Site: "UNIGE", Version: "1.2", Roles: []string{"origin", "cache"}, Started: now, Now: now},
			Transfers: Transfers{Totals: map[string]int64{"root/out": 3 << 20},
				Files: []Top{{Name: "/store/<script>x</script>.root", Bytes: 3 << 20}}},
			Cache: &Cache{HitBytes: 1, MissBytes: 1, HitRatio: 0.5},
		}
	})
	n := int64(0)
	rec, err := NewRecorder(RecorderConfig{Interval: time.Second, Window: time.Minute},
		func() map[string]int64 { n += 2000; return map[string]int64{"root/out": n} })
	if err != nil {
		t.Fatal(err)
	}
	rec.sample(now)
	rec.sample(now.Add(time.Second))
	r := get(t, Handler(src, rec, everyoneOperator), "GET", SnapshotPath)
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%s, %q, %q", r.Status, r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"))
	}
	raw := body(t, r)
	if strings.Contains(raw, "<script>") {
		t.Errorf("a file name went out unescaped: %s", raw)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"box", "transfers", "cache", "federation", "jobs"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %q in %s", k, raw)
		}
	}
	if got["federation"] != nil || got["jobs"] != nil {
		t.Errorf("roles the box does not play should be null: %s", raw)
	}
	var snap Snapshot
	json.Unmarshal([]byte(raw), &snap)
	if snap.Box.Name != "t3-box" || snap.Transfers.Files[0].Name != "/store/<script>x</script>.root" || snap.Cache.HitRatio != 0.5 {
		t.Errorf("round trip: %+v", snap)
	}
	rates := snap.Transfers.Rates
	if len(rates.Times) != 1 || rates.Series["root/out"][0] != 2000 || rates.IntervalSeconds != 1 {
		t.Errorf("rates %+v; want one point of 2000 B/s", rates)
	}
}

// Without a recorder the rates are empty lists, not null: the page's
// script can index them either way.
func TestSnapshotWithoutRecorder(t *testing.T) {
	raw := body(t, get(t, Handler(emptySource(), nil, nil), "GET", SnapshotPath))
	if !strings.Contains(raw, `"times":[]`) || !strings.Contains(raw, `"series":{}`) {
		t.Errorf("rates without a recorder: %s", raw)
	}
}

// everyoneOperator shows every request the names.
var everyoneOperator = ViewerFunc(func(*http.Request) (string, error) { return "ops (test)", nil })

// Anonymous visitors get no file names, user subjects or disk error
// text; an operator gets them; a refused token gets the reason.
func TestSnapshotHidesNamesFromAnonymous(t *testing.T) {
	src := SourceFunc(func() Snapshot {
		return Snapshot{
			Transfers: Transfers{Totals: map[string]int64{"root/out": 10},
				Files: []Top{{Name: "/store/user/alice/thesis.root", Bytes: 10}},
				Users: []Top{{Name: "alice", Bytes: 10}}, VOs: []Top{{Name: "cms", Bytes: 10}}},
			Cache: &Cache{DiskError: "open /var/cache/sitebox/store/user/alice: no space"},
		}
	})
	v := ViewerFunc(func(r *http.Request) (string, error) {
		switch BearerToken(r) {
		case "":
			return "", nil
		case "ops":
			return "ops (https://issuer)", nil
		case "alice":
			return "", fmt.Errorf("%w: alice is not listed", ErrNotOperator)
		}
		return "", errors.New("token expired at 2026-11-01T00:00:00Z")
	})
	h := Handler(src, nil, v)
	tests := []struct {
		name, auth string
		code       int
		has, lacks []string
	}{
		{"anonymous", "", 200, []string{`"names_hidden":true`, `"cms"`, `"top_files":null`}, []string{"alice", "thesis"}},
		{"operator", "Bearer ops", 200, []string{`"names_hidden":false`, "thesis.root", `"alice"`, "no space", "ops (https://issuer)"}, nil},
		// A valid token of someone who is no operator is as good as none:
		// the anonymous view, saying why the names stay hidden.
		{"not an operator", "Bearer alice", 200, []string{`"names_hidden":true`, `"cms"`, `"names_hidden_why":"not a dashboard operator: alice is not listed"`},
			[]string{"thesis", "no space", `"top_users":[`}},
		{"refused token", "Bearer expired", 401, []string{"token expired at"}, []string{"thesis"}},
		{"not a bearer header", "Basic b3BzOm9wcw==", 200, []string{`"names_hidden":true`}, []string{"thesis"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r *http.Response
			if tc.auth == "" {
				r = get(t, h, "GET", SnapshotPath)
			} else {
				r = get(t, h, "GET", SnapshotPath, "Authorization", tc.auth)
			}
			raw := body(t, r)
			if r.StatusCode != tc.code {
				t.Fatalf("%s; want %d: %s", r.Status, tc.code, raw)
			}
			for _, want := range tc.has {
				if !strings.Contains(raw, want) {
					t.Errorf("reply lacks %q: %s", want, raw)
				}
			}
			for _, bad := range tc.lacks {
				if strings.Contains(raw, bad) {
					t.Errorf("reply shows %q: %s", bad, raw)
				}
			}
		})
	}
}
