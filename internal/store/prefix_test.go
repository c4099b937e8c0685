package store

import (
	"slices"
	"testing"
)

func TestPrefixTableMatch(t *testing.T) {
	var tab PrefixTable[int]
	tab.Add("/store", 1)
	tab.Add("/store/user/alice", 3)
	tab.Add("/store/user", 2)
	tab.Add("/data", 4)
	for _, tc := range []struct {
		path   string
		prefix string
		want   int
		ok     bool
	}{
		{"/store", "/store", 1, true},
		{"/store/x", "/store", 1, true},
		{"/storex", "", 0, false},
		{"/store/user", "/store/user", 2, true},
		{"/store/userx", "/store", 1, true},
		{"/store/user/bob/f", "/store/user", 2, true},
		{"/store/user/alice", "/store/user/alice", 3, true},
		{"/store/user/alice/f", "/store/user/alice", 3, true},
		{"/store/user/alicex", "/store/user", 2, true},
		{"/data/a", "/data", 4, true},
		{"/dat", "", 0, false},
		{"/", "", 0, false},
	} {
		prefix, v, ok := tab.Match(tc.path)
		if prefix != tc.prefix || v != tc.want || ok != tc.ok {
			t.Errorf("Match(%q) = %q, %d, %v; want %q, %d, %v", tc.path, prefix, v, ok, tc.prefix, tc.want, tc.ok)
		}
		if v, ok := tab.Lookup(tc.path); v != tc.want || ok != tc.ok {
			t.Errorf("Lookup(%q) = %d, %v; want %d, %v", tc.path, v, ok, tc.want, tc.ok)
		}
	}
}

func TestPrefixTableRootCatchesAll(t *testing.T) {
	var tab PrefixTable[string]
	tab.Add("/", "root")
	tab.Add("/store", "store")
	for path, want := range map[string]string{"/": "root", "/x": "root", "/storex": "root", "/store": "store", "/store/a": "store"} {
		if v, _ := tab.Lookup(path); v != want {
			t.Errorf("Lookup(%q) = %q, want %q", path, v, want)
		}
	}
}

func TestPrefixTableOrder(t *testing.T) {
	var tab PrefixTable[int]
	tab.Add("/a", 1)
	tab.Add("/bb/c", 2)
	tab.Add("/cc", 3)
	tab.Add("/a", 4) // an equal prefix added later loses
	if got, want := tab.Prefixes(), []string{"/bb/c", "/cc", "/a", "/a"}; !slices.Equal(got, want) {
		t.Errorf("Prefixes() = %q, want %q", got, want)
	}
	if v, _ := tab.Lookup("/a/x"); v != 1 {
		t.Errorf("Lookup(/a/x) = %d, want the first added (1)", v)
	}
	var vs []int
	for _, v := range tab.All() {
		vs = append(vs, v)
	}
	if want := []int{2, 3, 1, 4}; !slices.Equal(vs, want) {
		t.Errorf("All() values = %v, want %v", vs, want)
	}
	if tab.Len() != 4 {
		t.Errorf("Len() = %d, want 4", tab.Len())
	}
	if got, want := tab.Children("/"), []string{"a", "bb", "cc"}; !slices.Equal(got, want) {
		t.Errorf("Children(/) = %q, want %q", got, want)
	}
	if got, want := tab.Children("/bb"), []string{"c"}; !slices.Equal(got, want) {
		t.Errorf("Children(/bb) = %q, want %q", got, want)
	}
}

func TestPrefixTableEmpty(t *testing.T) {
	var tab PrefixTable[*int]
	if v, ok := tab.Lookup("/x"); ok || v != nil {
		t.Errorf("empty table matched: %v %v", v, ok)
	}
}
