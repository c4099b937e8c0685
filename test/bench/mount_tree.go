package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// mountData is what the origin serves, by path under /store.
type mountData struct {
	tree     string   // the generated C tree
	sources  []string // its .c files, relative to tree
	files    []string // every regular file of the tree, for the sweep
	links    []string // its symbolic links
	big, fio string   // the large file and fio's
	uproot   []string // the ROOT files, as "/name"
	makefile string   // local: builds tree (given as SRC) into OUT
	outDir   string   // local: the objects
	scale    int      // MountConfig.Scale
}

func (c *MountConfig) dataDir() string { return filepath.Join(c.WorkDir, "origin") }

// The CMSSW build's metadata calls, per Scale.
const (
	cmsswOpens     = 24_000
	cmsswStats     = 24_000
	cmsswLstats    = 306_000
	cmsswReadlinks = 1_500
	includeDirs    = 4
	includesPerSrc = 12
)

// prepareMountData writes the origin's files into data, reusing those a
// previous run with the same shape left.
func prepareMountData(ctx context.Context, cfg *MountConfig, data string) (*mountData, error) {
	d := &mountData{tree: fmt.Sprintf("tree-s%d-h%d", cfg.Sources, cfg.Headers), big: "big.dat", fio: "fio.dat", scale: cfg.Scale}
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	if err := d.writeTree(cfg, filepath.Join(data, d.tree)); err != nil {
		return nil, err
	}
	if cfg.does("find") {
		if err := writeFindTree(filepath.Join(data, cfg.findTree()), cfg.FindEntries); err != nil {
			return nil, err
		}
	}
	if err := makeFile(filepath.Join(data, d.big), cfg.SeqSize); err != nil {
		return nil, err
	}
	if err := makeFile(filepath.Join(data, d.fio), cfg.FioSize); err != nil {
		return nil, err
	}
	if cfg.does("uproot") {
		ac := &AnalysisConfig{Python: cfg.Python, Branches: 200, ReadBranches: 4, Entries: cfg.Entries}
		ac.Files, ac.Out = 1, cfg.Out
		names, err := makeUprootFiles(ctx, ac, data)
		if err != nil {
			return nil, err
		}
		d.uproot = names
	}
	d.outDir = filepath.Join(cfg.WorkDir, "objects")
	d.makefile = filepath.Join(cfg.WorkDir, "Makefile")
	return d, os.WriteFile(d.makefile, []byte(d.makefileText()), 0o644)
}

// writeTree generates an include-heavy tree: includeDirs directories of
// headers, each header including two others behind include guards, and
// sources that include headers of every directory, so the compiler looks
// a header up in the directories before its own (failed lookups, as in a
// real build) and opens many small files. Every tenth header also has a
// symbolic link to it, for the sweep's readlinks.
func (d *mountData) writeTree(cfg *MountConfig, dir string) error {
	H := cfg.Headers
	for i := range includeDirs {
		inc := filepath.Join(dir, fmt.Sprintf("inc%d", i))
		if err := os.MkdirAll(inc, 0o755); err != nil {
			return err
		}
		for h := range H {
			name := fmt.Sprintf("inc%d/h%d_%03d.h", i, i, h)
			d.files = append(d.files, name)
			a, b := (i+1)%includeDirs, (i+2)%includeDirs
			body := fmt.Sprintf("#ifndef H%d_%03d\n#define H%d_%03d\n#include \"h%d_%03d.h\"\n#include <h%d_%03d.h>\nstatic inline int f%d_%03d(int x) { return x * %d + %d; }\n#endif\n",
				i, h, i, h, a, (h*7+1)%H, b, (h*3+2)%H, i, h, h+1, i)
			if err := writeIfChanged(filepath.Join(dir, name), body); err != nil {
				return err
			}
			if h%10 == 0 {
				link := fmt.Sprintf("inc%d/l%d_%03d.h", i, i, h)
				d.links = append(d.links, link)
				os.Remove(filepath.Join(dir, link))
				if err := os.Symlink(filepath.Base(name), filepath.Join(dir, link)); err != nil {
					return err
				}
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		return err
	}
	for s := range cfg.Sources {
		var b strings.Builder
		sum := "0"
		for k := range includesPerSrc {
			i, h := k%includeDirs, (s*13+k*5)%H
			fmt.Fprintf(&b, "#include <h%d_%03d.h>\n", i, h)
			sum = fmt.Sprintf("f%d_%03d(%s)", i, h, sum)
		}
		fmt.Fprintf(&b, "int src%d(void) { return %s; }\n", s, sum)
		name := fmt.Sprintf("src/s%03d.c", s)
		d.sources = append(d.sources, name)
		d.files = append(d.files, name)
		if err := writeIfChanged(filepath.Join(dir, name), b.String()); err != nil {
			return err
		}
	}
	return nil
}

// writeIfChanged keeps a file a rerun would write the same: its mtime
// then stays, and so do the caches of a reused work directory's origin.
func writeIfChanged(path, body string) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == body {
		return nil
	}
	return os.WriteFile(path, []byte(body), 0o644)
}

func (d *mountData) makefileText() string {
	var b strings.Builder
	b.WriteString("# Builds $(SRC)'s sources into $(OUT).\nINC :=")
	for i := range includeDirs {
		fmt.Fprintf(&b, " -I$(SRC)/inc%d", i)
	}
	b.WriteString("\nOBJS :=")
	for _, s := range d.sources {
		fmt.Fprintf(&b, " $(OUT)/%s", strings.TrimSuffix(filepath.Base(s), ".c")+".o")
	}
	b.WriteString("\nall: $(OBJS)\n$(OUT)/%.o: $(SRC)/src/%.c\n\tcc -O0 -c $(INC) -o $@ $<\n")
	return b.String()
}

// build compiles the tree under root with make -j2 into a fresh local
// objects directory and returns how long it took.
func (d *mountData) build(ctx context.Context, cfg *MountConfig, root string) (time.Duration, error) {
	os.RemoveAll(d.outDir)
	if err := os.MkdirAll(d.outDir, 0o755); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-j2", "-f", d.makefile, "SRC="+filepath.Join(root, d.tree), "OUT="+d.outDir)
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("make: %v: %s", err, trimMsg(out))
	}
	return took, nil
}

// warmBuilds builds cfg.WarmBuilds times more and gives the median.
func (d *mountData) warmBuilds(ctx context.Context, cfg *MountConfig, root string) (time.Duration, error) {
	var took []time.Duration
	for range cfg.WarmBuilds {
		t, err := d.build(ctx, cfg, root)
		if err != nil {
			return 0, err
		}
		took = append(took, t)
	}
	slices.Sort(took)
	return took[len(took)/2], nil
}

// sweep makes the CMSSW build's metadata calls, divided by Scale, over
// the tree's files under root: opens (each reading the file's first
// 4 KiB), stats, lstats and readlinks, each kind cycling over the files
// (or links). The note says what the setup could not do (xrootdfs shows
// links as files), and such calls are not failures.
func (d *mountData) sweep(root string) (time.Duration, string, error) {
	base := filepath.Join(root, d.tree)
	scale := d.scale
	buf := make([]byte, 4096)
	t0 := time.Now()
	for i := range cmsswOpens / scale {
		f, err := os.Open(filepath.Join(base, d.files[i%len(d.files)]))
		if err != nil {
			return 0, "", err
		}
		_, err = f.Read(buf)
		f.Close()
		if err != nil && err != io.EOF {
			return 0, "", err
		}
	}
	for i := range cmsswStats / scale {
		if _, err := os.Stat(filepath.Join(base, d.files[i%len(d.files)])); err != nil {
			return 0, "", err
		}
	}
	for i := range cmsswLstats / scale {
		if _, err := os.Lstat(filepath.Join(base, d.files[i%len(d.files)])); err != nil {
			return 0, "", err
		}
	}
	failed := 0
	var first error
	for i := range cmsswReadlinks / scale {
		if _, err := os.Readlink(filepath.Join(base, d.links[i%len(d.links)])); err != nil {
			failed++
			if first == nil {
				first = err
			}
		}
	}
	note := ""
	if failed > 0 {
		note = fmt.Sprintf("%d of %d readlinks failed (%v)", failed, cmsswReadlinks/scale, first)
	}
	return time.Since(t0), note, nil
}
