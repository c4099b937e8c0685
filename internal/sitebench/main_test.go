package sitebench

import (
	"os"
	"testing"

	"sitebox/test/peers"
)

// built is the one build of cmd/sitebox the tests share when SITEBOX_BIN
// is not set; TestMain removes it.
var built peers.SiteboxBuild

// siteboxBinary is SITEBOX_BIN (scripts/test.sh sets it), else a build
// of cmd/sitebox made once for the whole test binary.
func siteboxBinary(t *testing.T) string { return built.Binary(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	built.Remove()
	os.Exit(code)
}
