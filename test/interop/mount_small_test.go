package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMountSmallFiles: the small files of a directory are read whole
// when the directory is listed, so opening them asks the server nothing
// (they are still read with the server gone), yet a file changed on the
// server is read anew once the listing is renewed, and a file written
// through the mount is read back as written.
func TestMountSmallFiles(t *testing.T) {
	requireFUSE(t)
	b := startBox(t, 1)
	inc := filepath.Join(b.pools[0], "inc")
	os.MkdirAll(inc, 0o755)
	header := func(i int) []byte { return []byte(fmt.Sprintf("#define H%d %d\n", i, i)) }
	for i := range 6 {
		os.WriteFile(filepath.Join(inc, fmt.Sprintf("h%d.h", i)), header(i), 0o644)
	}

	m := startMount(t, b.rootURL+"//store", "--dir-ttl", "1s", "--attr-timeout", "0", "--entry-timeout", "0", "--negative-timeout", "0")
	sameFile(t, filepath.Join(m.dir, "inc", "h0.h"), header(0))
	changed := []byte("#define H1 \"changed on the server, and longer\"\n")
	os.WriteFile(filepath.Join(inc, "h1.h"), changed, 0o644)
	time.Sleep(1500 * time.Millisecond) // the listing's lifetime
	sameFile(t, filepath.Join(m.dir, "inc", "h1.h"), changed)
	through := []byte("written through the mount\n")
	if err := os.WriteFile(filepath.Join(m.dir, "inc", "h2.h"), through, 0o644); err != nil {
		t.Fatal(err)
	}
	sameFile(t, filepath.Join(m.dir, "inc", "h2.h"), through)
	sameFile(t, filepath.Join(inc, "h2.h"), through)

	// A second mount lists the directory once (one lookup) and then has
	// every small file of it: the server may go away.
	m2 := startMount(t, b.rootURL+"//store", "-r")
	sameFile(t, filepath.Join(m2.dir, "inc", "h3.h"), header(3))
	time.Sleep(500 * time.Millisecond) // the directory's reads end
	b.proc.Kill()
	for _, i := range []int{4, 5} {
		sameFile(t, filepath.Join(m2.dir, "inc", fmt.Sprintf("h%d.h", i)), header(i))
	}
}
