package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"sitebox/internal/remote"
	"sitebox/internal/store"
	"sitebox/internal/transfer"
)

// remoteFlags are shared by the client commands.
type remoteFlags struct {
	caFile   string
	insecure bool
}

func (f *remoteFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.caFile, "ca", os.Getenv("SITEBOX_CA"), "extra CA certificate (PEM) to trust for https:// and roots:// (env SITEBOX_CA)")
	cmd.Flags().BoolVar(&f.insecure, "insecure", os.Getenv("SITEBOX_INSECURE") == "1", "do not verify https:// and roots:// certificates (env SITEBOX_INSECURE=1)")
}

func (f *remoteFlags) open(raw string) (*transfer.Remote, error) {
	if !transfer.IsRemote(raw) {
		return nil, fmt.Errorf("%q is not a URL of a server (%s)", raw, remote.SchemeList())
	}
	tok, err := bearerToken()
	if err != nil {
		return nil, err
	}
	return transfer.Open(raw, transfer.Options{CAFile: f.caFile, Insecure: f.insecure, Token: tok})
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// progressFor shows a bar on a terminal, or always with --progress.
func progressFor(force bool) *transfer.Progress {
	if force || term.IsTerminal(int(os.Stderr.Fd())) {
		return transfer.NewProgress(os.Stderr)
	}
	return nil
}

// addTransferCommands registers get, put, ls, stat and cksum.
func addTransferCommands(root *cobra.Command) {
	var rf remoteFlags
	var showProgress, force, long bool
	var algo string

	get := &cobra.Command{
		Use:   "get URL DEST",
		Short: "Download a file from a server URL (" + remote.SchemeList() + "); DEST '-' is stdout",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := rf.open(args[0])
			if err != nil {
				return err
			}
			defer r.Close()
			ctx, stop := signalContext()
			defer stop()
			_, err = transfer.Get(ctx, r, args[1], progressFor(showProgress))
			if err != nil {
				return fmt.Errorf("get %s: %w", args[0], err)
			}
			return nil
		},
	}
	get.Flags().BoolVar(&showProgress, "progress", false, "always show the progress bar")

	put := &cobra.Command{
		Use:   "put SRC URL",
		Short: "Upload a local file to a server URL (" + remote.SchemeList() + ")",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := rf.open(args[1])
			if err != nil {
				return err
			}
			defer r.Close()
			ctx, stop := signalContext()
			defer stop()
			if _, err := transfer.Put(ctx, args[0], r, force, progressFor(showProgress)); err != nil {
				return fmt.Errorf("put %s: %w", args[1], err)
			}
			return nil
		},
	}
	put.Flags().BoolVarP(&force, "force", "f", false, "overwrite an existing file")
	put.Flags().BoolVar(&showProgress, "progress", false, "always show the progress bar")

	ls := &cobra.Command{
		Use:   "ls URL",
		Short: "List a remote directory",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := rf.open(args[0])
			if err != nil {
				return err
			}
			defer r.Close()
			ctx, stop := signalContext()
			defer stop()
			entries, err := r.Store.List(ctx, r.Path)
			if err != nil {
				return fmt.Errorf("ls %s: %w", args[0], err)
			}
			out := cmd.OutOrStdout()
			for _, e := range entries {
				name := path.Join(r.Path, e.Name)
				if long {
					fmt.Fprintf(out, "%s %12d %s %s\n", modeString(e.Mode), e.Size, e.ModTime.UTC().Format(time.DateTime), name)
				} else {
					fmt.Fprintln(out, name)
				}
			}
			return nil
		},
	}
	ls.Flags().BoolVarP(&long, "long", "l", false, "show mode, size and modification time")

	stat := &cobra.Command{
		Use:   "stat URL",
		Short: "Describe a remote file or directory",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := rf.open(args[0])
			if err != nil {
				return err
			}
			defer r.Close()
			ctx, stop := signalContext()
			defer stop()
			fi, err := r.Store.Stat(ctx, r.Path)
			if err != nil {
				return fmt.Errorf("stat %s: %w", args[0], err)
			}
			printStat(cmd, r.Path, fi)
			return nil
		},
	}

	ck := &cobra.Command{
		Use:   "cksum URL",
		Short: "Print a remote file's checksum (adler32 or crc32c)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := rf.open(args[0])
			if err != nil {
				return err
			}
			defer r.Close()
			ctx, stop := signalContext()
			defer stop()
			sum, err := store.Checksum(ctx, r.Store, r.Path, algo)
			if err != nil {
				return fmt.Errorf("cksum %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s:%s %s\n", algo, sum, args[0])
			return nil
		},
	}
	ck.Flags().StringVar(&algo, "type", "adler32", "checksum algorithm: adler32 or crc32c")

	for _, c := range []*cobra.Command{get, put, ls, stat, ck} {
		rf.add(c)
		root.AddCommand(c)
	}
}

func modeString(m fs.FileMode) string { return m.String() }

func printStat(cmd *cobra.Command, p string, fi store.FileInfo) {
	kind := "file"
	if fi.IsDir() {
		kind = "directory"
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Path:  %s\nType:  %s\nSize:  %d\nMode:  %s\nMTime: %s\n", p, kind, fi.Size, fi.Mode, fi.ModTime.UTC().Format(time.DateTime))
}
