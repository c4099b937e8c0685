package interop

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMountSmallFiles: the small files of a directory are read whole
// when the first of them is opened, so opening the others asks the
// server nothing (they are still read with the server gone), yet a file changed on the
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

	// On a second mount, the first open in the directory reads every
	// small file of it: the server may go away.
	m2 := startMount(t, b.rootURL+"//store", "-r")
	sameFile(t, filepath.Join(m2.dir, "inc", "h3.h"), header(3))
	time.Sleep(500 * time.Millisecond) // the directory's reads end
	b.proc.Kill()
	for _, i := range []int{4, 5} {
		sameFile(t, filepath.Join(m2.dir, "inc", fmt.Sprintf("h%d.h", i)), header(i))
	}
}

// TestMountPrunesKernelNames: with room for fewer names than a walk
// sees, the mount has the kernel drop the oldest (so its memory stays
// bounded on a find over millions of files) and every name is still
// found, by a second walk and by stat, with the right size.
func TestMountPrunesKernelNames(t *testing.T) {
	requireFUSE(t)
	b := startBox(t, 1)
	const dirs, files = 20, 200
	for d := range dirs {
		dir := filepath.Join(b.pools[0], "walk", fmt.Sprintf("d%02d", d))
		os.MkdirAll(dir, 0o755)
		for f := range files {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", f)), []byte(fmt.Sprint(d*files+f)), 0o644)
		}
	}
	m := startMount(t, b.rootURL+"//store", "-r", "--max-inodes", "500")
	walk := func() int {
		n := 0
		err := filepath.WalkDir(filepath.Join(m.dir, "walk"), func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				n++
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for round := range 2 {
		if n := walk(); n != dirs*files {
			t.Fatalf("walk %d found %d files, want %d", round+1, n, dirs*files)
		}
	}
	for _, i := range []int{0, 1999, 3999} {
		p := filepath.Join(m.dir, "walk", fmt.Sprintf("d%02d", i/files), fmt.Sprintf("f%03d", i%files))
		if fi, err := os.Stat(p); err != nil || fi.Size() != int64(len(fmt.Sprint(i))) {
			t.Errorf("stat %s after the walks: %v, %v", p, fi, err)
		}
	}
}
