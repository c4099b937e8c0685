package server

import (
	"strconv"
	"testing"
	"time"
)

func TestTPCGrants(t *testing.T) {
	var g tpcGrants
	if err := g.add("k", tpcGrant{path: "/f", expires: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if gr, ok := g.get("k"); !ok || gr.path != "/f" {
		t.Fatalf("get: %v %v", gr, ok)
	}
	g.add("old", tpcGrant{path: "/o", expires: time.Now().Add(-time.Second)})
	if _, ok := g.get("old"); ok {
		t.Error("an expired grant was found")
	}
	for i := range maxTPCGrants - 1 { // "k" holds one place
		if err := g.add(strconv.Itoa(i), tpcGrant{path: "/x", expires: time.Now().Add(time.Minute)}); err != nil {
			t.Fatalf("grant %d refused: %v", i, err)
		}
	}
	if err := g.add("one-too-many", tpcGrant{path: "/x", expires: time.Now().Add(time.Minute)}); err == nil {
		t.Error("the grant table grew past its bound")
	}
}

func TestTPCCGI(t *testing.T) {
	tests := []struct {
		name, cgi string
		tpc       bool
	}{
		{"none", "", false},
		{"authz only", "authz=Bearer%20x", false},
		{"placement without key", "tpc.stage=placement", false},
		{"destination", "tpc.key=k&tpc.src=h:1094&tpc.lfn=/f&tpc.stage=copy", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tpcCGI(tc.cgi) != nil; got != tc.tpc {
				t.Errorf("tpcCGI(%q) != nil is %v, want %v", tc.cgi, got, tc.tpc)
			}
		})
	}
}

func TestCGISafe(t *testing.T) {
	if got := cgiSafe("root.12@[::ffff:1.2.3.4]&x=y?z"); got != "root.12@[::ffff:1.2.3.4]xyz" {
		t.Errorf("cgiSafe: %q", got)
	}
}
