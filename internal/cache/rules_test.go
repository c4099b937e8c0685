package cache

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"sitebox/internal/store"
)

// A cache filling with its own token serves only paths an access rule
// covers; everything else is refused with the missing rule named, before
// the upstream is asked anything.
func TestPrivateCacheRefusesUnruledPaths(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Private, c.Ruled = true, []string{"/store/cms"} })
	want := e.file("cms/f", 100<<10)
	e.file("other/f", 10)
	ctx := context.Background()
	if got := e.read("/store/cms/f", 32<<10); !bytes.Equal(got, want) {
		t.Fatal("ruled path: data differs")
	}
	opens := e.up.opens.Load()
	for name, op := range map[string]func() error{
		"open":     func() error { _, err := e.c.Open(ctx, "/store/other/f"); return err },
		"stat":     func() error { _, err := e.c.Stat(ctx, "/store/other/f"); return err },
		"list":     func() error { _, err := e.c.List(ctx, "/store"); return err },
		"checksum": func() error { _, err := e.c.Checksum(ctx, "/store/other/f", "adler32"); return err },
		"locate":   func() error { _, err := store.Locate(ctx, e.c, "//store/other/f"); return err },
	} {
		err := op()
		if !errors.Is(err, store.ErrPermission) || !strings.Contains(err.Error(), "no [[auth.namespace]] rule covers") ||
			!strings.Contains(err.Error(), "/store/cms") {
			t.Errorf("%s of an unruled path: %v", name, err)
		}
	}
	if e.up.opens.Load() != opens {
		t.Error("the upstream was asked for an unruled path")
	}

	// No rule at all: nothing is served, and the reason says so.
	none := newEnv(t, func(c *Config) { c.Private = true })
	none.file("cms/f", 10)
	if _, err := none.c.Open(ctx, "/store/cms/f"); err == nil || !strings.Contains(err.Error(), "none is configured") {
		t.Errorf("open with no rules: %v", err)
	}
	// A cache filling anonymously serves anyone, as its origin did.
	anon := newEnv(t, nil)
	data := anon.file("other/f", 10)
	if got := anon.read("/store/other/f", 10); !bytes.Equal(got, data) {
		t.Error("anonymous cache: data differs")
	}
}
