package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"sitebox/internal/sitebench"
	"sitebox/internal/units"
)

// newBenchDiskCmd is `sitebox bench disk`: dd-like parallel writers and
// readers on a directory, the storage table of a site report.
func newBenchDiskCmd() *cobra.Command {
	var (
		cfg                 sitebench.DiskConfig
		dir, size, bs, mode string
		outDir              string
		quick               bool
	)
	cmd := &cobra.Command{
		Use:   "disk",
		Short: "Parallel dd-like writers then readers on a directory, with and without O_DIRECT: MB/s and CPU as a table and a chart",
		Long: `For each writer count (--writers) and mode (--direct), N writers each
write their own --size file of random data in --bs blocks, all at once,
then N readers read the files back, and the files are removed.

  O_DIRECT  aligned buffers, no page cache; fdatasync at the end of each file
  buffered  page cache, fdatasync at the end of each file (so the cache
            does not flatter writes); reads after fadvise(DONTNEED), so
            they come from the disk

Point --dir at the pool to measure (a scratch subdirectory is made there
and removed); the default is a temporary directory under $TMPDIR. It
needs writers × size free. Prints, as Markdown: aggregate write and read
MB/s, per-writer MB/s and the machine's CPU busy share, per writer count
and mode; writes disk.png (MB/s against writers) into --out. Progress
goes to stderr.`,
		Example: `  sitebox bench disk --dir /data/pool1          # 1 GiB per writer, 1,2,4,8 writers, both modes
  sitebox bench disk --quick                     # 64 MiB, 1,2 writers
  sitebox bench disk --dir /nfs/scratch --direct off --writers 1,4,16`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if quick {
				quickDefault(cmd, "size", func() { size = "64MiB" })
				quickDefault(cmd, "writers", func() { cfg.Writers = []int{1, 2} })
			}
			var err error
			if cfg.FileSize, err = units.ParseSize(size); err != nil || cfg.FileSize <= 0 {
				return fmt.Errorf("--size %q: want a size such as 1GiB", size)
			}
			if cfg.BlockSize, err = units.ParseSize(bs); err != nil || cfg.BlockSize <= 0 {
				return fmt.Errorf("--bs %q: want a size such as 1MiB", bs)
			}
			switch mode {
			case "both":
				cfg.Direct = []bool{true, false}
			case "on":
				cfg.Direct = []bool{true}
			case "off":
				cfg.Direct = []bool{false}
			default:
				return fmt.Errorf("--direct %q: want both, on or off", mode)
			}
			// sitebench.Disk makes its scratch directory in dir and removes it.
			if dir == "" {
				dir = os.TempDir()
			}
			ctx, stop := signalContext()
			defer stop()
			cfg.Dir, cfg.Out = filepath.Clean(dir), cmd.ErrOrStderr()
			rep, err := sitebench.Disk(ctx, cfg)
			if rep != nil && len(rep.Points) > 0 {
				err = printTableAndChart(cmd.OutOrStdout(), sitebench.FormatDisk(rep), func() (string, error) { return sitebench.DiskChart(rep, outDir) }, err)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dir, "dir", "", "directory to measure, e.g. a pool (default: a temporary directory, removed)")
	fl.StringVar(&size, "size", "1GiB", "file size per writer")
	fl.IntSliceVar(&cfg.Writers, "writers", []int{1, 2, 4, 8}, "parallel writer (and reader) counts")
	fl.StringVar(&bs, "bs", "1MiB", "block size of each write and read (a multiple of 4KiB for O_DIRECT)")
	fl.StringVar(&mode, "direct", "both", "O_DIRECT: on, off (buffered + fdatasync) or both")
	fl.StringVar(&outDir, "out", ".", "directory for the PNG chart")
	fl.BoolVar(&quick, "quick", false, "smoke test: 64MiB per writer, writers 1,2 (explicit flags win)")
	return cmd
}
