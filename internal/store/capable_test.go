package store

import (
	"context"
	"errors"
	"io/fs"
	"testing"
)

// plain serves one file and has no capability.
type plain struct{}

func (plain) Stat(ctx context.Context, name string) (FileInfo, error) {
	if name != "/f" {
		return FileInfo{}, &PathError{Op: "stat", Path: name, Err: ErrNotFound}
	}
	return FileInfo{Name: "f", Writable: true}, nil
}
func (plain) Open(ctx context.Context, name string) (File, error) { return nil, ErrUnsupported }
func (plain) List(ctx context.Context, name string) ([]FileInfo, error) {
	return nil, ErrUnsupported
}

// hiding wraps plain and offers only what its As says.
type hiding struct {
	plain
	offer bool
}

func (h hiding) Locate(ctx context.Context, name string) ([]Location, error) {
	return []Location{{Endpoint: "elsewhere:1094"}}, nil
}
func (h hiding) As(target any) bool { return h.offer && Offer[Locator](h.inner(), target, Locator(h)) }
func (h hiding) inner() Store       { return located{} }

type located struct{ plain }

func (located) Locate(ctx context.Context, name string) ([]Location, error) { return nil, nil }

func TestAsAsksTheOutermostWrapper(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Store
		want bool
	}{
		{"no capability", plain{}, false},
		{"by type assertion", located{}, true},
		{"wrapper offers", hiding{offer: true}, true},
		{"wrapper withholds its own method", hiding{offer: false}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := As[Locator](tc.s); ok != tc.want {
				t.Errorf("As[Locator] = %v, want %v", ok, tc.want)
			}
		})
	}
}

func TestHelpersWithoutCapability(t *testing.T) {
	ctx := context.Background()
	locs, err := Locate(ctx, plain{}, "/f")
	if err != nil || len(locs) != 1 || locs[0].Endpoint != "" || !locs[0].Writable {
		t.Errorf("Locate = %+v, %v; want here, writable", locs, err)
	}
	if _, err := Locate(ctx, plain{}, "/g"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Locate of a missing file: %v", err)
	}
	if _, err := Create(ctx, plain{}, "/f", CreateOptions{}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Create: %v, want ErrReadOnly", err)
	}
	if _, err := Checksum(ctx, plain{}, "/f", "adler32"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Checksum: %v, want ErrUnsupported", err)
	}
}
