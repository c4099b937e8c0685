package krb5auth

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// mapper turns a client principal of one realm into a local user name.
type mapper struct {
	realm Realm
	users map[string]string // from MapFile: "alice@EXAMPLE.ORG" → "alice"; nil: strip
}

// maxMapFile bounds a map file: it is read whole at start.
const maxMapFile = 4 << 20

func newMapper(r Realm) (*mapper, error) {
	m := &mapper{realm: r}
	if r.MapFile == "" {
		return m, nil
	}
	f, err := os.Open(r.MapFile)
	if err != nil {
		return nil, fmt.Errorf("realm %s: map file: %w", r.Name, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > maxMapFile {
		return nil, fmt.Errorf("realm %s: map file %s is over %d bytes", r.Name, r.MapFile, maxMapFile)
	}
	m.users = map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("realm %s: map file %s line %d: want \"principal localuser\"", r.Name, r.MapFile, n)
		}
		if _, realm, err := ParsePrincipal(fields[0]); err != nil || realm != r.Name {
			return nil, fmt.Errorf("realm %s: map file %s line %d: %q is not a principal of realm %s", r.Name, r.MapFile, n, fields[0], r.Name)
		}
		if err := CheckUser(fields[1]); err != nil {
			return nil, fmt.Errorf("realm %s: map file %s line %d: %w", r.Name, r.MapFile, n, err)
		}
		m.users[fields[0]] = fields[1]
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("realm %s: map file %s: %w", r.Name, r.MapFile, err)
	}
	return m, nil
}

// localUser maps name (the principal's components) to a local user.
func (m *mapper) localUser(components []string) (string, error) {
	princ := strings.Join(components, "/") + "@" + m.realm.Name
	if m.users != nil {
		u, ok := m.users[princ]
		if !ok {
			return "", fmt.Errorf("principal %s is not in realm %s's map file", princ, m.realm.Name)
		}
		return u, nil
	}
	if len(components) != 1 {
		// alice/admin is not alice: an instance is another identity.
		return "", fmt.Errorf("principal %s has an instance; realm %s maps only plain user principals (use a map file)", princ, m.realm.Name)
	}
	if err := CheckUser(components[0]); err != nil {
		return "", fmt.Errorf("principal %s: %w", princ, err)
	}
	return components[0], nil
}

// CheckUser refuses local user names that could not be a login name, so
// a mapped user never carries path separators or spaces into scope paths,
// jobs or logs.
func CheckUser(u string) error {
	if u == "" || len(u) > 64 || u == "." || u == ".." {
		return fmt.Errorf("local user %q is not a valid user name", u)
	}
	for _, c := range u {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("local user %q is not a valid user name (letters, digits, '.', '_', '-')", u)
		}
	}
	return nil
}
