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

	"sitebox/internal/auth"
	"sitebox/internal/outbound"
	"sitebox/internal/remote"
	"sitebox/internal/store"
	"sitebox/internal/transfer"
	"sitebox/internal/x509grid"
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
	opts := transfer.Options{CAFile: f.caFile, Insecure: f.insecure, Options: outbound.Options{Token: tok}}
	if err := userProxy(&opts); err != nil {
		return nil, err
	}
	userKerberos(&opts.Options)
	return transfer.Open(raw, opts)
}

// userProxy adds the user's X.509 proxy, as xrdcp and gfal find it
// ($X509_USER_PROXY, else /tmp/x509up_u<uid>), presented to servers
// that ask for one (gsi, https client certificates). Servers are then
// checked against the grid CA directory ($X509_CERT_DIR, else
// /etc/grid-security/certificates) besides the system roots, as they
// are whenever X509_CERT_DIR is set. Without either nothing changes.
func userProxy(opts *transfer.Options) error {
	file, ok, err := outbound.UserProxyFile(os.Getenv, os.Getuid())
	if err != nil {
		return err
	}
	if ok {
		cred := x509grid.NewCredentialFile(file)
		// A proxy the user named is checked now; the default file only
		// when a server asks for it (an old one must not stop reading a
		// public server), the reason then named in the refusal.
		if _, err := cred.Get(); err != nil && os.Getenv("X509_USER_PROXY") != "" {
			return fmt.Errorf("X509_USER_PROXY: %w", err)
		}
		opts.Proxy = cred.Get
	}
	dir := (*auth.X509Settings)(nil).GridCertDir()
	if st, err := os.Stat(dir); (ok || os.Getenv("X509_CERT_DIR") != "") && err == nil && st.IsDir() {
		if opts.GridRoots, err = remote.GridRoots(dir); err != nil {
			return fmt.Errorf("X509_CERT_DIR: %w", err)
		}
	}
	return nil
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
	for _, c := range []*cobra.Command{getCommand(&rf), putCommand(&rf), lsCommand(&rf), statCommand(&rf), cksumCommand(&rf)} {
		rf.add(c)
		root.AddCommand(c)
	}
}

// onRemote opens the server at rawURL, runs fn on it under a context
// that Ctrl-C cancels, and closes it again; fn's error is prefixed with
// op and the URL.
func (rf *remoteFlags) onRemote(op, rawURL string, fn func(ctx context.Context, r *transfer.Remote) error) error {
	r, err := rf.open(rawURL)
	if err != nil {
		return err
	}
	defer r.Close()
	ctx, stop := signalContext()
	defer stop()
	if err := fn(ctx, r); err != nil {
		return fmt.Errorf("%s %s: %w", op, rawURL, err)
	}
	return nil
}

func getCommand(rf *remoteFlags) *cobra.Command {
	var showProgress bool
	get := &cobra.Command{
		Use:   "get URL DEST",
		Short: "Download a file from a server URL (" + remote.SchemeList() + "); DEST '-' is stdout",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return rf.onRemote("get", args[0], func(ctx context.Context, r *transfer.Remote) error {
				_, err := transfer.Get(ctx, r, args[1], progressFor(showProgress))
				return err
			})
		},
	}
	get.Flags().BoolVar(&showProgress, "progress", false, "always show the progress bar")
	return get
}

func putCommand(rf *remoteFlags) *cobra.Command {
	var showProgress, force bool
	put := &cobra.Command{
		Use:   "put SRC URL",
		Short: "Upload a local file to a server URL (" + remote.SchemeList() + ")",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return rf.onRemote("put", args[1], func(ctx context.Context, r *transfer.Remote) error {
				_, err := transfer.Put(ctx, args[0], r, force, progressFor(showProgress))
				return err
			})
		},
	}
	put.Flags().BoolVarP(&force, "force", "f", false, "overwrite an existing file")
	put.Flags().BoolVar(&showProgress, "progress", false, "always show the progress bar")
	return put
}

func lsCommand(rf *remoteFlags) *cobra.Command {
	var long bool
	ls := &cobra.Command{
		Use:   "ls URL",
		Short: "List a remote directory",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return rf.onRemote("ls", args[0], func(ctx context.Context, r *transfer.Remote) error {
				entries, err := r.Store.List(ctx, r.Path)
				if err != nil {
					return err
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
			})
		},
	}
	ls.Flags().BoolVarP(&long, "long", "l", false, "show mode, size and modification time")
	return ls
}

func statCommand(rf *remoteFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "stat URL",
		Short: "Describe a remote file or directory",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return rf.onRemote("stat", args[0], func(ctx context.Context, r *transfer.Remote) error {
				fi, err := r.Store.Stat(ctx, r.Path)
				if err != nil {
					return err
				}
				printStat(cmd, r.Path, fi)
				return nil
			})
		},
	}
}

func cksumCommand(rf *remoteFlags) *cobra.Command {
	var algo string
	ck := &cobra.Command{
		Use:   "cksum URL",
		Short: "Print a remote file's checksum (adler32, crc32c, or md5 where the server offers it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return rf.onRemote("cksum", args[0], func(ctx context.Context, r *transfer.Remote) error {
				sum, err := store.Checksum(ctx, r.Store, r.Path, algo)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s:%s %s\n", algo, sum, args[0])
				return nil
			})
		},
	}
	ck.Flags().StringVar(&algo, "type", "adler32", "checksum algorithm: adler32, crc32c or md5")
	return ck
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
