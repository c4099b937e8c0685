package config

import (
	"errors"
	"strings"
	"testing"
)

func TestProblemsNamedWithLines(t *testing.T) {
	dir := t.TempDir()
	text := `[server]
name = "box"
log_format = "xml"

[root]
addr = "localhost:99999"

[https]
cert = "/nonexistent/cert.pem"
colour = "blue"

[[export]]
prefix = "/store"
pools = ["` + dir + `"]

[[export]]
prefix = "store//x"
pools = ["relative", "/nonexistent/pool"]
`
	_, _, err := Parse("site.toml", []byte(text))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse error = %v, want *Problems", err)
	}
	// Unknown keys and invalid values are all reported in one pass.
	if len(ps.List) != 8 || ps.List[0].Line != 10 || !strings.Contains(ps.List[0].String(), "colour") {
		t.Fatalf("problems = %v", ps.List)
	}

	text = strings.Replace(text, "colour = \"blue\"\n", "", 1)
	_, _, err = Parse("site.toml", []byte(text))
	if !errors.As(err, &ps) {
		t.Fatalf("Parse error = %v, want *Problems", err)
	}
	want := map[string]int{
		"server.log_format": 3,
		"root.addr":         6,
		"https.cert":        9,
		"export[2].prefix":  16,
		"export[2].pools":   17,
	}
	got := map[string]int{}
	for _, p := range ps.List {
		got[p.Key] = p.Line
	}
	for k, line := range want {
		if got[k] != line {
			t.Errorf("problem %s reported at line %d, want %d (all: %v)", k, got[k], line, ps.List)
		}
	}
}

func TestSyntaxErrorHasLine(t *testing.T) {
	_, _, err := Parse("x.toml", []byte("[server]\nname = \"a\"\nbad line here\n"))
	var ps *Problems
	if !errors.As(err, &ps) || ps.List[0].Line != 3 {
		t.Fatalf("syntax error = %v, want a problem on line 3", err)
	}
}

func TestValidMinimal(t *testing.T) {
	dir := t.TempDir()
	cfg, _, err := Parse("ok.toml", []byte("[[export]]\nprefix = \"/store\"\npools = [\""+dir+"\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ApplyDefaults("host", false)
	if cfg.Root.Addr != ":1094" || cfg.HTTPS.Addr != ":8443" || cfg.Server.Name != "host" {
		t.Fatalf("defaults not applied: %+v", cfg)
	}
}

func TestChecksumsSetting(t *testing.T) {
	dir := t.TempDir()
	exports := "\n[[export]]\nprefix = \"/store\"\npools = [\"" + dir + "\"]\n"
	cfg, _, err := Parse("site.toml", []byte("[server]\nchecksums = [\"md5\"]\n"+exports))
	if err != nil || !cfg.Server.Offered().Has("md5") {
		t.Fatalf("md5: %v, offered %v", err, cfg.Server.Offered().Names())
	}
	_, _, err = Parse("site.toml", []byte("[server]\nchecksums = [\"sha1\"]\n"+exports))
	var ps *Problems
	if !errors.As(err, &ps) || len(ps.List) != 1 || ps.List[0].Key != "server.checksums" || ps.List[0].Line != 2 {
		t.Fatalf("sha1: %v", err)
	}
}
