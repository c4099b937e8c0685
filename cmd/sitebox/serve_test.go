package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFlagsOverrideFile(t *testing.T) {
	pool, other := t.TempDir(), t.TempDir()
	cfgFile := filepath.Join(t.TempDir(), "site.toml")
	os.WriteFile(cfgFile, []byte(`
[root]
addr = "127.0.0.1:1111"
[https]
addr = "127.0.0.1:2222"
[[export]]
prefix = "/store"
pools = ["`+pool+`"]
`), 0o644)
	serve, fl := newServeCmd()
	if err := serve.ParseFlags([]string{"--config", cfgFile, "--root-addr", "127.0.0.1:3333", "--export", "/data=" + pool + "," + other + ":ro", "--http",
		"--tpc-allow", "*.cern.ch", "--tpc-allow", "10.1.0.0/16"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := fl.load(serve)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Root.Addr != "127.0.0.1:3333" || cfg.HTTPS.Addr != "127.0.0.1:2222" || !cfg.HTTPS.PlainHTTP {
		t.Errorf("addresses: root %q https %q plain %v", cfg.Root.Addr, cfg.HTTPS.Addr, cfg.HTTPS.PlainHTTP)
	}
	if len(cfg.Exports) != 1 || cfg.Exports[0].Prefix != "/data" || len(cfg.Exports[0].Pools) != 2 || !cfg.Exports[0].ReadOnly {
		t.Errorf("exports from flags: %+v", cfg.Exports)
	}
	if strings.Join(cfg.TPC.Allow, " ") != "*.cern.ch 10.1.0.0/16" {
		t.Errorf("tpc allow from flags: %q", cfg.TPC.Allow)
	}
}

func TestConfigCheckNamesLines(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[root]\naddr = \"nonsense\"\n\n[[export]]\nprefix = \"/store\"\npools = [\"/no/such/pool\"]\n"), 0o644)
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"config", "check", bad})
	if err := root.Execute(); err == nil {
		t.Fatal("config check accepted a bad file")
	}
	for _, want := range []string{"line 2: root.addr", "line 6: export[1].pools"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("config check output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestParseExportFlag(t *testing.T) {
	for _, bad := range []string{"/store", "=/x", "/store=", "/store=/a,,/b"} {
		if _, err := parseExportFlag(bad); err == nil {
			t.Errorf("parseExportFlag(%q) accepted", bad)
		}
	}
}

// A file that only lacks what the flags give (here, any export) is
// completed by them; a file with an unknown setting is still refused.
func TestFlagsCompleteAFile(t *testing.T) {
	pool := t.TempDir()
	dir := t.TempDir()
	partial := filepath.Join(dir, "partial.toml")
	os.WriteFile(partial, []byte("[root]\naddr = \"127.0.0.1:1111\"\n"), 0o644)
	serve, fl := newServeCmd()
	if err := serve.ParseFlags([]string{"--config", partial, "--export", "/data=" + pool}); err != nil {
		t.Fatal(err)
	}
	cfg, err := fl.load(serve)
	if err != nil {
		t.Fatalf("flags did not complete the file: %v", err)
	}
	if cfg.Root.Addr != "127.0.0.1:1111" || len(cfg.Exports) != 1 {
		t.Errorf("root %q exports %+v", cfg.Root.Addr, cfg.Exports)
	}

	unknown := filepath.Join(dir, "unknown.toml")
	os.WriteFile(unknown, []byte("[root]\nadrr = \"127.0.0.1:1111\"\n"), 0o644)
	serve, fl = newServeCmd()
	if err := serve.ParseFlags([]string{"--config", unknown, "--export", "/data=" + pool}); err != nil {
		t.Fatal(err)
	}
	if _, err := fl.load(serve); err == nil || !strings.Contains(err.Error(), "unknown setting") {
		t.Errorf("a misspelt setting was not refused: %v", err)
	}
}
