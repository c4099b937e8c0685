package director

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"sitebox/internal/atomicfile"
	"sitebox/internal/store"
)

// Member is a box the director's operator approved: which key signs its
// advertisements and what it may claim with them. Like a namespace
// registry binding a prefix to a key, the director takes nothing from an
// advertisement that its member record does not allow.
type Member struct {
	Name string `json:"name"`
	// Site, when set, is the only site the member may claim (the site
	// decides which clients are sent to it first).
	Site string `json:"site,omitempty"`
	// Key is the member's public key, "ed25519:" and its base64.
	Key string `json:"key"`
	// Roles it may advertise (origin, cache, director).
	Roles []string `json:"roles"`
	// Prefixes it may claim; its ads' prefixes (and, for a director, the
	// servers below it) must lie at or below one of them.
	Prefixes []string `json:"prefixes"`
	// Root (host:port) and HTTPS (https://host:port) are the only
	// endpoints it may advertise: the director sends clients and its own
	// probes nowhere else for it.
	Root  string `json:"root,omitempty"`
	HTTPS string `json:"https,omitempty"`
	// Approved is when the operator approved it.
	Approved time.Time `json:"approved,omitempty"`
	// Static marks a member from the director's config ([[director.member]]),
	// which `sitebox federation revoke` cannot remove.
	Static bool `json:"static,omitempty"`
}

// KeyPrefix starts a member key's text form.
const KeyPrefix = "ed25519:"

// FormatKey is the text form of a public key.
func FormatKey(pub ed25519.PublicKey) string {
	return KeyPrefix + base64.StdEncoding.EncodeToString(pub)
}

// ParseKey reads the text form of a public key.
func ParseKey(s string) (ed25519.PublicKey, error) {
	b64, ok := strings.CutPrefix(s, KeyPrefix)
	if !ok {
		return nil, fmt.Errorf("key %q does not start with %q", s, KeyPrefix)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("key %q is not a base64 ed25519 public key", s)
	}
	return ed25519.PublicKey(raw), nil
}

// Check explains what is wrong with a member record, or returns nil.
func (m *Member) Check() error {
	if m.Name == "" || len(m.Name) > maxNameLen || strings.ContainsAny(m.Name, " \t\r\n/") {
		return fmt.Errorf("member name %q: want 1-%d characters, no spaces or slashes", m.Name, maxNameLen)
	}
	if _, err := ParseKey(m.Key); err != nil {
		return fmt.Errorf("member %s: %w", m.Name, err)
	}
	if len(m.Roles) == 0 {
		return fmt.Errorf("member %s: no roles", m.Name)
	}
	for _, r := range m.Roles {
		if r != RoleOrigin && r != RoleCache && r != RoleDirector {
			return fmt.Errorf("member %s: role %q is not origin, cache or director", m.Name, r)
		}
	}
	if len(m.Prefixes) == 0 {
		return fmt.Errorf("member %s: no prefixes", m.Name)
	}
	for _, p := range m.Prefixes {
		if c, err := store.CleanPath(p); err != nil || c != p {
			return fmt.Errorf("member %s: prefix %q is not a clean namespace path", m.Name, p)
		}
	}
	if m.Root == "" && m.HTTPS == "" {
		return fmt.Errorf("member %s: no endpoint (root or https)", m.Name)
	}
	return nil
}

// names are the registry entries a member may advertise: its own name,
// and name-cache for the cache of a box that also plays another role (as
// a box names its ads).
func (m *Member) names() []string { return []string{m.Name, m.Name + "-cache"} }

// grants reports whether prefix p lies at or below a granted prefix.
func (m *Member) grants(p string) bool {
	for _, g := range m.Prefixes {
		if store.HasPrefix(p, g) {
			return true
		}
	}
	return false
}

func (m *Member) hasRole(r string) bool { return slices.Contains(m.Roles, r) }

// same reports whether two records grant the same things (the approval
// time aside), so a rewrite of the file that changes nothing for a member
// keeps its servers.
func (m Member) same(o Member) bool {
	m.Approved, o.Approved = time.Time{}, time.Time{}
	a, _ := json.Marshal(m)
	b, _ := json.Marshal(o)
	return string(a) == string(b)
}

// MembersFile is where a director with this state dir keeps the members
// `sitebox federation approve` recorded.
func MembersFile(stateDir string) string {
	return filepath.Join(stateDir, "federation", "members.json")
}

// ReadMembers reads a members file; a missing file is no members.
func ReadMembers(path string) ([]Member, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("members: %w", err)
	}
	var ms []Member
	if err := json.Unmarshal(data, &ms); err != nil {
		return nil, fmt.Errorf("members file %s: %w", path, err)
	}
	for i := range ms {
		if err := ms[i].Check(); err != nil {
			return nil, fmt.Errorf("members file %s: %w", path, err)
		}
	}
	return ms, nil
}

// UpdateMembers changes the members file under an exclusive lock (two
// operators approving at once do not lose either), writing the new list
// atomically so a running director never reads half a file.
func UpdateMembers(path string, change func([]Member) ([]Member, error)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("members: %w", err)
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("members: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("members: lock: %w", err)
	}
	ms, err := ReadMembers(path)
	if err != nil {
		return err
	}
	if ms, err = change(ms); err != nil {
		return err
	}
	data, err := json.MarshalIndent(ms, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("members: %w", err)
	}
	return nil
}
