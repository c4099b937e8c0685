package origin

import (
	"path/filepath"
	"strings"
	"testing"
)

// Validate names each export's bad prefix and pools by its place in the
// file.
func TestExportsValidate(t *testing.T) {
	dir := t.TempDir()
	es := Exports{
		{Prefix: "/store", Pools: []string{dir}},
		{Prefix: "/store/", Pools: []string{"relative", filepath.Join(dir, "missing")}},
		{Prefix: "", Pools: nil},
	}
	want := []string{
		`export[2].prefix: "/store/" should be written "/store"`,
		`export[2].prefix: "/store" is already exported by export[1]`,
		`export[2].pools: "relative" must be an absolute directory`,
		`export[2].pools: pool ` + filepath.Join(dir, "missing") + `: no such file or directory`,
		`export[3].prefix: missing: the namespace path this export serves`,
		`export[3].pools: missing: at least one storage directory`,
	}
	ps := es.Validate()
	if len(ps) != len(want) {
		t.Fatalf("problems %v, want %d", ps, len(want))
	}
	for i, p := range ps {
		if !strings.HasPrefix(p.String(), want[i]) {
			t.Errorf("problem %d = %q, want %q", i+1, p.String(), want[i])
		}
	}
}
