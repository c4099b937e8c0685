package auth

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"sitebox/internal/krb5auth"
)

// maxMapfile bounds a grid-mapfile or VOMS mapfile: each is read whole
// at start and at every refresh.
const maxMapfile = 8 << 20

// mapfileLine is one mapping of a grid-mapfile or VOMS mapfile. The
// forms, one per line, "#" starting a comment line:
//
//	"/DC=org/DC=example/CN=Alice" alice          a DN (Globus' grid-mapfile)
//	"/cms/Role=production/Capability=NULL" prod  an FQAN pattern (XRootD's voms.mapfile, LCMAPS)
//	"*" "/cms/Role=production" prod              a DN ("*": any) and an FQAN (dCache's vorolemap)
//
// A name is quoted when it holds spaces; \" and \\ escape in quotes. A
// DN is told from an FQAN by its first component, which has an "=". Of
// "alice,alice2" (Globus' several accounts) the first is the user.
type mapfileLine struct {
	dn   string       // "" for any
	fqan *fqanPattern // nil for a DN line
	user string
	line int
}

// readMapfile reads a grid-mapfile or VOMS mapfile; an error names the
// file and line.
func readMapfile(path string) ([]mapfileLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMapfile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxMapfile {
		return nil, fmt.Errorf("%s is over %d bytes", path, maxMapfile)
	}
	var out []mapfileLine
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(nil, maxMapfile)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		l, err := parseMapfileLine(text)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		l.line = n
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

func parseMapfileLine(text string) (mapfileLine, error) {
	fields, err := splitMapfileLine(text)
	if err != nil {
		return mapfileLine{}, err
	}
	var l mapfileLine
	var name string
	switch len(fields) {
	case 2:
		name = fields[0]
		if isDN(name) {
			l.dn = name
		}
	case 3:
		if fields[0] != "*" && !isDN(fields[0]) {
			return l, fmt.Errorf("%q is neither a DN (/DC=…/CN=…) nor \"*\"", fields[0])
		}
		if fields[0] != "*" {
			l.dn = fields[0]
		}
		name = fields[1]
		if isDN(name) {
			return l, fmt.Errorf("want \"DN\" \"FQAN\" user; %q is a DN", name)
		}
	default:
		return l, errors.New(`want "DN" user, "FQAN" user or "DN" "FQAN" user`)
	}
	if l.dn == "" || len(fields) == 3 {
		p, err := parseFQANPattern(name)
		if err != nil {
			return l, err
		}
		l.fqan = &p
	}
	user, _, _ := strings.Cut(fields[len(fields)-1], ",")
	if strings.HasPrefix(user, ".") {
		return l, fmt.Errorf("%q is a pool account, which this box does not lease: name one user", user)
	}
	if err := krb5auth.CheckUser(user); err != nil {
		return l, err
	}
	l.user = user
	return l, nil
}

// isDN tells a DN ("/DC=org/…") from an FQAN ("/cms/…"): a DN's first
// component is an attribute, with "=".
func isDN(s string) bool {
	first, _, _ := strings.Cut(strings.TrimPrefix(s, "/"), "/")
	return strings.HasPrefix(s, "/") && strings.Contains(first, "=")
}

// splitMapfileLine splits a line into its fields: quoted ("…", with \"
// and \\ escapes) or bare words.
func splitMapfileLine(text string) ([]string, error) {
	var fields []string
	for text = strings.TrimLeft(text, " \t"); text != ""; text = strings.TrimLeft(text, " \t") {
		if text[0] != '"' {
			end := strings.IndexAny(text, " \t")
			if end < 0 {
				end = len(text)
			}
			fields = append(fields, text[:end])
			text = text[end:]
			continue
		}
		var b strings.Builder
		i := 1
		for ; i < len(text) && text[i] != '"'; i++ {
			if text[i] == '\\' {
				if i+1 == len(text) || !strings.ContainsRune(`"\'`, rune(text[i+1])) {
					return nil, fmt.Errorf("an escape other than \\\" \\' or \\\\ in %s (no DN or FQAN holds one)", text)
				}
				i++
			}
			b.WriteByte(text[i])
		}
		if i == len(text) {
			return nil, fmt.Errorf("unterminated quote in %s", text)
		}
		fields = append(fields, b.String())
		text = text[i+1:]
		if text != "" && text[0] != ' ' && text[0] != '\t' {
			return nil, fmt.Errorf("no space after a quoted name in %s", text)
		}
	}
	return fields, nil
}
