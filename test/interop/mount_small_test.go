package interop

import (
	"bytes"
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

// TestMountZeroMessageOpens: a read-only mount of one user has the
// kernel open its files without asking the mount (it logs so), and
// still reads them right: again and again, and anew once a file
// changed on the server is seen changed (its pages dropped, the file
// opened again). A writable mount asks for every open.
func TestMountZeroMessageOpens(t *testing.T) {
	requireFUSE(t)
	b := startBox(t, 1)
	dir := filepath.Join(b.pools[0], "z")
	os.MkdirAll(dir, 0o755)
	small, big := filepath.Join(dir, "small.h"), filepath.Join(dir, "big.bin")
	os.WriteFile(small, []byte("first\n"), 0o644)
	bigData := writeRandom(t, big, 3<<20)

	m := startMount(t, b.rootURL+"//store", "-r", "--dir-ttl", "1s", "--attr-timeout", "1s", "--entry-timeout", "1s")
	if !m.logs("zero_message_opens=true") {
		t.Fatalf("a read-only mount of one user does not open without requests:\n%s", m.log.String())
	}
	for range 3 {
		sameFile(t, filepath.Join(m.dir, "z", "small.h"), []byte("first\n"))
		sameFile(t, filepath.Join(m.dir, "z", "big.bin"), bigData)
	}
	// Changed on the server, same sizes, later mtimes.
	os.WriteFile(small, []byte("again\n"), 0o644)
	newBig := bytes.Repeat([]byte{7}, len(bigData))
	os.WriteFile(big, newBig, 0o644)
	later := time.Now().Add(time.Minute)
	for _, p := range []string{small, big} {
		os.Chtimes(p, later, later)
	}
	time.Sleep(2500 * time.Millisecond) // the listing's and the kernel's lifetimes
	for _, p := range []string{"small.h", "big.bin"} {
		os.Stat(filepath.Join(m.dir, "z", p)) // the kernel sees the new mtime
	}
	sameFile(t, filepath.Join(m.dir, "z", "small.h"), []byte("again\n"))
	sameFile(t, filepath.Join(m.dir, "z", "big.bin"), newBig)

	w := startMount(t, b.rootURL+"//store")
	if !w.logs("zero_message_opens=false") {
		t.Errorf("a writable mount opens without requests:\n%s", w.log.String())
	}
}
