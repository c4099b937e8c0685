package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"sitebox/internal/units"
	"sitebox/test/bench"
)

// newBenchAuthCmd is `sitebox-bench auth`: what each wire-protection level
// costs in throughput, root:// and https:// side by side in one run.
// benchAuthLong is the auth command's help: what it starts and measures.
const benchAuthLong = `Starts a sitebox box with three public-read namespaces, /bench/none,
/bench/integrity and /bench/privacy, holding the same file, serving root://
(and roots:// with its self-signed certificate) and https://, plus a second
box with the same policy over the same pool serving plain http://. The file
is read to /dev/null, one client at a time:

  root://  none       xrdcp, plain kXR_read (XRD_CPUSEPGWRTRD=0, sendfile)
  root://  integrity  xrdcp default, kXR_pgread (CRC32C per page)
  root://  privacy    xrdcp roots:// (TLS)
  https:// none       curl http:// from the plain box
  https:// integrity  curl https://
  https:// privacy    curl https://

plus two variants at privacy (roots:// with kXR_read, curl over HTTP/2).
Before the rounds it checks that the box refuses the unprotected paths
(plain root:// of /bench/privacy, kXR_read of /bench/integrity). Each round
reads through every path, the first rotating per round.

Prints MB/s (median), each level's cost against the same protocol's "none",
whether TLS meets the ≤ 15 % target, and the boxes' peak RSS as Markdown.

Then the cost of authentication at connection time: fresh xrdfs connections
authenticating with unix (anonymous), krb5 (a throwaway MIT KDC and realm)
and ztn, over root:// and roots://: connections/s and CPU per connection.
Skipped, with a note, without the MIT Kerberos tools (krb5-kdc,
krb5-admin-server, krb5-user).

Then gsi logins with a VOMS proxy of a throwaway grid (openssl,
voms-proxy-fake): a box with [auth.x509] beside xrootd 5.5 with gsi and
libXrdVoms, over root:// and roots://, one client at a time and 16 at
once (connections/s, server and client CPU per login), and the data rate
of a copy after a gsi login beside one after an anonymous login.
Skipped, with a note, without voms-clients; xrootd's rows without
xrootd-voms-plugins.
Progress goes to stderr. Needs xrdcp, xrdfs, curl and openssl.`

func newBenchAuthCmd() *cobra.Command {
	var (
		cfg     bench.AuthConfig
		size    string
		workDir string
		quick   bool
	)
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Throughput of one file read over root:// and https:// at protection levels none, integrity and privacy",
		Long:  benchAuthLong,
		Example: `  sitebox-bench auth                 # 1 GiB, 3 rounds: about a minute
  sitebox-bench auth --quick         # 256 MiB, 1 round
  sitebox-bench auth --size 4GiB --rounds 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if quick {
				quickDefault(cmd, "size", func() { size = "256MiB" })
				quickDefault(cmd, "rounds", func() { cfg.Rounds = 1 })
			}
			var err error
			if cfg.FileSize, err = units.ParseSize(size); err != nil || cfg.FileSize <= 0 {
				return fmt.Errorf("--size %q: want a size such as 1GiB", size)
			}
			if cfg.Rounds <= 0 {
				return fmt.Errorf("--rounds %d: want at least 1", cfg.Rounds)
			}
			run, err := startBenchRun(cmd, "auth", workDir)
			if err != nil {
				return err
			}
			defer run.done()
			cfg.Sitebox, cfg.WorkDir, cfg.Out = run.sitebox, run.workDir, cmd.ErrOrStderr()
			rep, err := bench.Auth(run.ctx, cfg)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), bench.FormatAuth(rep))
			if !rep.ChecksPassed() {
				return errors.New("bench auth: a refusal check failed: the protected rows may have measured an unprotected path")
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&size, "size", "1GiB", "size of the test file")
	fl.IntVar(&cfg.Rounds, "rounds", 3, "rounds over every path (median reported)")
	fl.StringVar(&workDir, "work-dir", "", "scratch directory; the test file is kept there for reruns (default: a temporary one, removed)")
	fl.BoolVar(&quick, "quick", false, "smoke test: 256MiB, 1 round (explicit flags win)")
	return cmd
}
