package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"sitebox/internal/admin"
	"sitebox/internal/xrootd/client"
	"sitebox/test/peers"
)

// FilesConfig is the many-files mode of the cache bench: how a sitebox
// cache holding many cached files starts, and what its purges and `cache
// ls` pages cost. For each count, a cache directory is filled with that
// many small cached files (each a 4 KiB file, fully cached), then
// `sitebox serve` starts on it and a client reads a cached file until it
// gets its first byte. The files watermarks are set just under the count,
// so the purge round that follows the start-up scan evicts the
// filesPurged oldest files (written with an older access time); then
// pages of `cache ls` are read through the admin socket.
type FilesConfig struct {
	Sitebox string    // sitebox binary
	WorkDir string    // the cache directories are built here (kept for reruns)
	Counts  []int     // default 10^4, 10^5, 10^6
	Out     io.Writer // progress lines
}

// FilesPoint is one count's start-up.
type FilesPoint struct {
	Files     int
	FirstByte time.Duration // from the process's start to a cached file's first byte
	Scan      time.Duration // until every cached file was registered ("cache scanned")
	RSS       int64         // after the scan
	PeakRSS   int64
	// Purge is the time of the purge round that evicted PurgedFiles files
	// (as the cache logs it).
	Purge       time.Duration
	PurgedFiles int
	LsPage      time.Duration // one page of filesLsPage entries from the middle, best of a few
	Err         string
}

const (
	filesBlock  = 1 << 20
	filesSize   = 4096
	filesPurged = 100  // files one purge round evicts
	filesLsPage = 1000 // entries per `cache ls` page
)

// CacheFiles runs the many-files mode.
func CacheFiles(ctx context.Context, cfg FilesConfig) ([]FilesPoint, error) {
	if len(cfg.Counts) == 0 {
		cfg.Counts = []int{10_000, 100_000, 1_000_000}
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	var pts []FilesPoint
	for _, n := range cfg.Counts {
		if err := ctx.Err(); err != nil {
			return pts, err
		}
		dir := filepath.Join(cfg.WorkDir, "cache-"+strconv.Itoa(n))
		fmt.Fprintf(cfg.Out, "bench cache files: %d cached files in %s\n", n, dir)
		p := FilesPoint{Files: n}
		if err := fillCacheDir(dir, n); err != nil {
			p.Err = err.Error()
		} else if err := startupPoint(ctx, cfg.Sitebox, dir, &p); err != nil {
			p.Err = err.Error()
		}
		pts = append(pts, p)
		fmt.Fprintf(cfg.Out, "  %8d files: first byte %v, scan %v, RSS %s (peak %s), purge of %d files %v, ls page %v %s\n", n, p.FirstByte.Round(time.Millisecond), p.Scan.Round(time.Millisecond), rssText(p.RSS), rssText(p.PeakRSS), p.PurgedFiles, p.Purge, p.LsPage, p.Err)
	}
	return pts, nil
}

func filesName(i int) string { return fmt.Sprintf("/store/d%03d/f%07d", i%1000, i) }

// purgedAtime is the access time of the files a purge round takes: older
// than any other file's, whichever run wrote those (a rerun rewrites only
// these, and a time relative to its own start would make them the newest).
func purgedAtime() time.Time { return time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) }

// fillCacheDir writes n fully cached files in the cache's on-disk form
// (a data file and a version 2 block map each), reusing a directory a
// previous run completed: only the files its purge evicted are written
// again, and any other file missing (evicted by a purge of a run before
// purgedAtime) is found by counting and written too. The first
// filesPurged files were last read long ago, so they are the ones a
// purge takes.
func fillCacheDir(dir string, n int) error {
	done := filepath.Join(dir, ".complete")
	if _, err := os.Stat(done); err != nil {
		if err := writeCachedFiles(dir, n, 0, n, false); err != nil {
			return err
		}
		return os.WriteFile(done, nil, 0o644)
	}
	if err := writeCachedFiles(dir, n, 0, min(n, filesPurged), false); err != nil {
		return err
	}
	have, err := countCachedFiles(dir)
	if err != nil || have == n {
		return err
	}
	return writeCachedFiles(dir, n, filesPurged, n, true)
}

// writeCachedFiles writes files [from, to) of a directory of n, or with
// onlyMissing those of them not there.
func writeCachedFiles(dir string, n, from, to int, onlyMissing bool) error {
	now := time.Now()
	data := make([]byte, filesSize)
	for i := from; i < to; i++ {
		name := filesName(i)
		if onlyMissing {
			if _, err := os.Stat(filepath.Join(dir, "meta", name)); err == nil {
				continue
			}
		}
		copy(data, fmt.Sprintf("cached file %d\n", i))
		atime := now
		if i < filesPurged {
			atime = purgedAtime()
		}
		if i < min(n, 1000) || onlyMissing {
			for _, sub := range []string{"data", "meta"} {
				if err := os.MkdirAll(filepath.Join(dir, sub, filepath.Dir(name)), 0o755); err != nil {
					return err
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "data", name), data, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "meta", name), blockMapBytes(data, now, atime), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// countCachedFiles counts the block maps under dir: one directory read
// per thousand files, not a stat per file.
func countCachedFiles(dir string) (int, error) {
	root := filepath.Join(dir, "meta", "store")
	subs, err := os.ReadDir(root)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, d := range subs {
		es, err := os.ReadDir(filepath.Join(root, d.Name()))
		if err != nil {
			return 0, err
		}
		total += len(es)
	}
	return total, nil
}

// blockMapBytes is the block map of a one-block file fully cached (the
// format of internal/cache/cinfo.go, version 2), validated at now and
// last read at atime.
func blockMapBytes(data []byte, now, atime time.Time) []byte {
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	le := binary.LittleEndian
	b := []byte("SBXC")
	b = le.AppendUint32(b, 2)
	b = le.AppendUint32(b, filesBlock)
	b = le.AppendUint64(b, uint64(len(data)))
	b = le.AppendUint64(b, uint64(now.Add(-time.Hour).UnixNano())) // upstream mtime
	b = le.AppendUint64(b, uint64(now.UnixNano()))                 // validated
	b = le.AppendUint64(b, uint64(atime.UnixNano()))               // last access
	b = le.AppendUint32(b, 1)                                      // blocks
	b = le.AppendUint64(b, 1)                                      // block 0 present
	b = le.AppendUint32(b, crc32.Checksum(data, castagnoli))       // its one page
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// startupPoint starts a sitebox cache on dir and times its first byte,
// its scan and its memory.
func startupPoint(ctx context.Context, bin, dir string, p *FilesPoint) error {
	port, err := peers.FreePort()
	if err != nil {
		return err
	}
	state, err := os.MkdirTemp(filepath.Dir(dir), "state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	// The upstream is never asked: every file was validated just now.
	// The files marks make one purge round evict filesPurged files once
	// the scan has registered nearly all; the bytes marks never trigger.
	cfgText := fmt.Sprintf("[server]\nstate_dir = %q\nlog_level = \"info\"\n[root]\naddr = \"127.0.0.1:%d\"\n[https]\naddr = \"off\"\n"+
		"[cache]\ndir = %q\nrevalidate = \"24h\"\nhigh_water = \"1000TiB\"\nlow_water = \"900TiB\"\nfiles_high_water = \"%d\"\nfiles_low_water = \"%d\"\npurge_interval = \"1h\"\n"+
		"[[cache.route]]\nprefix = \"/store\"\nupstreams = [\"root://127.0.0.1:9\"]\n",
		state, port, dir, p.Files-filesPurged/2, p.Files-filesPurged)
	start := time.Now()
	proc, err := startConfigBox(ctx, bin, filepath.Join(state, "sitebox.toml"), cfgText, false, []int{port})
	if err != nil {
		return err
	}
	defer proc.Stop()
	want := fmt.Sprintf("cached file %d\n", p.Files-1)
	fs := client.NewFS("127.0.0.1:" + strconv.Itoa(port))
	defer fs.Close()
	for {
		if err := readFirst(ctx, fs, filesName(p.Files-1), want); err == nil {
			p.FirstByte = time.Since(start)
			break
		} else if time.Since(start) > 5*time.Minute {
			return fmt.Errorf("no first byte after 5 minutes: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for !strings.Contains(proc.Log.String(), "cache scanned") {
		if err := ctx.Err(); err != nil {
			return err // interrupted: the scan of a cold million files takes minutes
		}
		if time.Since(start) > 30*time.Minute {
			return fmt.Errorf("the scan did not finish in 30 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Scan = time.Since(start)
	if p.RSS, err = proc.RSS(); err != nil {
		return err
	}
	p.PeakRSS, _ = proc.PeakRSS()
	if err := purgeRound(ctx, proc, start, p); err != nil {
		return err
	}
	return lsPage(ctx, state, p)
}

var purgeLine = regexp.MustCompile(`msg="cache purge".* freed_files=([1-9][0-9]*) .*took=(\S+)`)

// purgeRound waits for the purge that evicts the oldest files and reads
// its time from the log.
func purgeRound(ctx context.Context, proc *peers.Process, start time.Time, p *FilesPoint) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if m := purgeLine.FindStringSubmatch(proc.Log.String()); m != nil {
			p.PurgedFiles, _ = strconv.Atoi(m[1])
			d, err := time.ParseDuration(m[2])
			p.Purge = d
			return err
		}
		if time.Since(start) > 35*time.Minute {
			return fmt.Errorf("no purge round in the log")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lsPage times `cache ls` pages from the middle of the listing through
// the admin socket, best of five.
func lsPage(ctx context.Context, state string, p *FilesPoint) error {
	c := admin.NewClient(state)
	after := filesName(p.Files / 2)
	for range 5 {
		t0 := time.Now()
		es, err := c.EntriesPage(ctx, "/store", after, filesLsPage)
		d := time.Since(t0)
		if err != nil {
			return fmt.Errorf("cache ls: %w", err)
		}
		if len(es) != filesLsPage {
			return fmt.Errorf("cache ls page: %d entries, want %d", len(es), filesLsPage)
		}
		if p.LsPage == 0 || d < p.LsPage {
			p.LsPage = d
		}
	}
	return nil
}

func readFirst(ctx context.Context, fs *client.FS, name, want string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	f, err := fs.Open(ctx, name)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, len(want))
	if _, err := f.ReadAt(buf, 0); err != nil {
		return err
	}
	if string(buf) != want {
		return fmt.Errorf("read %q, want %q", buf, want)
	}
	return nil
}

// FormatFiles renders the many-files points as a table.
func FormatFiles(pts []FilesPoint) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "cached files\tfirst byte\tall registered\tRSS after\tpeak RSS\tpurge round\tls page\t")
	for _, p := range pts {
		if p.Err != "" {
			fmt.Fprintf(w, "%d\tfailed: %s\t\t\t\t\t\t\n", p.Files, firstLine(p.Err))
			continue
		}
		fmt.Fprintf(w, "%d\t%v\t%v\t%s\t%s\t%v (%d files)\t%v (%d)\t\n", p.Files, p.FirstByte.Round(time.Millisecond), p.Scan.Round(time.Millisecond),
			rssText(p.RSS), rssText(p.PeakRSS), p.Purge, p.PurgedFiles, p.LsPage.Round(10*time.Microsecond), filesLsPage)
	}
	w.Flush()
	return b.String()
}
