package director

import (
	"crypto/ed25519"
	"os"
	"sync"
	"syscall"
	"time"
)

// membership is the running director's members: those of its config and
// those of the members file, which it re-reads when the file changes. It
// also keeps each member's last accepted sequence number. It is safe for
// concurrent use.
type membership struct {
	path   string // members file ("" none)
	static map[string]Member

	mu      sync.Mutex
	file    map[string]Member
	keys    map[string]ed25519.PublicKey
	owners  map[string]string // registry name → member owning it
	stamp   fileStamp
	loadErr string           // the last load failure, logged once
	seq     map[string]int64 // member → last accepted sequence
}

// fileStamp tells a changed file from the same one: an approval replaces
// the file (a new inode), an editor may rewrite it in place.
type fileStamp struct {
	ino     uint64
	size    int64
	modTime time.Time
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	st := fileStamp{size: fi.Size(), modTime: fi.ModTime()}
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = s.Ino
	}
	return st
}

func newMembership(path string, static []Member) *membership {
	m := &membership{path: path, static: map[string]Member{}, file: map[string]Member{},
		keys: map[string]ed25519.PublicKey{}, seq: map[string]int64{}}
	for _, s := range static {
		s.Static = true
		m.static[s.Name] = s
	}
	m.rebuildKeys()
	return m
}

// get returns the member of that name and its key.
func (m *membership) get(name string) (Member, ed25519.PublicKey, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mem, ok := m.static[name]
	if !ok {
		mem, ok = m.file[name]
	}
	return mem, m.keys[name], ok
}

// owner is the member that owns a registry name ("" none): a member owns
// its name and its name-cache, so no other member's ad and no child of a
// director may take them.
func (m *membership) owner(entry string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.owners[entry]
}

// advance records seq as the member's latest if it is after the last one
// accepted; a replayed or reordered advertisement is refused. It returns
// the last accepted sequence.
func (m *membership) advance(name string, seq int64) (last int64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	last = m.seq[name]
	if seq <= last {
		return last, false
	}
	m.seq[name] = seq
	return last, true
}

// reload re-reads the members file if it changed since the last look.
// It is called every second and before each advertisement is checked, so
// an approval counts for the very next ad and a revocation within a
// second, without a restart; a look is one stat(2) (cheaper than the TLS
// handshake before it), the file is read only when it changed. It returns
// the members removed or changed, whose servers the director drops, and
// a load error to log (once).
func (m *membership) reload(now time.Time) (gone []string, loadErr string) {
	if m.path == "" {
		return nil, ""
	}
	// Held throughout, so two reloads never apply an older file over a
	// newer one.
	m.mu.Lock()
	defer m.mu.Unlock()
	st := stampOf(m.path)
	if st == m.stamp {
		return nil, ""
	}
	ms, err := ReadMembers(m.path)
	if err != nil {
		// Keep the members we had: a half-edited file must not drop the
		// whole federation. Logged once per failure.
		if err.Error() != m.loadErr {
			m.loadErr = err.Error()
			return nil, m.loadErr
		}
		return nil, ""
	}
	m.loadErr = ""
	m.stamp = st
	next := map[string]Member{}
	for _, mem := range ms {
		if _, isStatic := m.static[mem.Name]; !isStatic {
			next[mem.Name] = mem
		}
	}
	for name, was := range m.file {
		if now, ok := next[name]; !ok || !now.same(was) {
			// Its last sequence is kept: a re-approved box signs newer
			// ones anyway, and its captured old ads stay refused.
			gone = append(gone, name)
		}
	}
	m.file = next
	m.rebuildKeys()
	return gone, ""
}

// rebuildKeys parses the members' keys once, not at every ad, and notes
// which member owns which registry name (a child director's ad asks for
// each of up to MaxChildren names); m.mu held (or m not shared yet).
// Records were checked when read.
func (m *membership) rebuildKeys() {
	m.keys = map[string]ed25519.PublicKey{}
	m.owners = map[string]string{}
	for _, set := range []map[string]Member{m.file, m.static} {
		for name, mem := range set {
			if k, err := ParseKey(mem.Key); err == nil {
				m.keys[name] = k
			}
		}
	}
	// The config's members first: their names stand over the file's.
	for _, set := range []map[string]Member{m.static, m.file} {
		for _, mem := range set {
			for _, n := range mem.names() {
				if _, taken := m.owners[n]; !taken {
					m.owners[n] = mem.Name
				}
			}
		}
	}
}

// names lists every member, of the config and of the file.
func (m *membership) names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.static)+len(m.file))
	for _, set := range []map[string]Member{m.static, m.file} {
		for name := range set {
			out = append(out, name)
		}
	}
	return out
}

// setStatic replaces the members of the config (a reload of the box's
// config), returning those removed or changed, whose servers the
// director drops. The file is read again at the next look, since a
// member it names may no longer be shadowed by the config.
func (m *membership) setStatic(static []Member) (gone []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := map[string]Member{}
	for _, s := range static {
		s.Static = true
		next[s.Name] = s
	}
	for name, was := range m.static {
		if now, ok := next[name]; !ok || !now.same(was) {
			gone = append(gone, name)
		}
	}
	m.static = next
	m.stamp = fileStamp{}
	m.rebuildKeys()
	return gone
}
