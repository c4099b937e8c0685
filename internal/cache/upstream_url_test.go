package cache

import (
	"testing"

	"sitebox/internal/remote"
)

// The config accepts exactly the upstream URLs the cache can dial.
func TestCheckUpstreamURLSchemes(t *testing.T) {
	for _, s := range remote.Schemes() {
		if msg := CheckUpstreamURL(s + "://h:1094"); msg != "" {
			t.Errorf("%s:// refused: %s", s, msg)
		}
		if enc := encrypted(s + "://h:1094"); enc != remote.Encrypted(s) {
			t.Errorf("encrypted(%s://) = %v", s, enc)
		}
	}
	for _, u := range []string{"ftp://h:1", "file://h:1/x", "dav://h:1"} {
		if CheckUpstreamURL(u) == "" {
			t.Errorf("%s accepted", u)
		}
	}
}
