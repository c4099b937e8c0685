package krb5auth

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Bounds of the replay cache. An entry lives from its authenticator's
// acceptance until the authenticator's time plus the clock skew, so a
// client principal authenticating r times a second holds about r × skew
// entries; the per-client bound keeps one busy (or hostile) principal
// from filling the cache for everyone.
const (
	maxReplayEntries   = 1 << 18 // 8 MiB of file, some 30 MiB of memory
	maxReplayPerClient = 1 << 14
)

var (
	// errReplay is an authenticator seen before: a captured credential
	// sent again.
	errReplay = errors.New("replay detected: this authenticator was presented before")
	// errReplayFull is a cache at its bound: refusing is safe, forgetting
	// an entry would let its authenticator be replayed.
	errReplayFull = errors.New("too many Kerberos authentications within the clock skew: try again shortly")
)

// replayTag names an authenticator: a hash of its ciphertext, which
// only the holder of the ticket's session key can make anew, so a replay
// is the same bytes and a fresh authenticator never collides with one.
type replayTag [16]byte

// clientTag names a client principal (a hash), for the per-client bound.
type clientTag [8]byte

type replayEntry struct {
	ctime  int64 // the authenticator's time, µs since 1970
	client clientTag
}

// replayCache remembers the authenticators accepted within the clock
// skew, so that each is accepted once (RFC 4120 3.2.3). It lives in a
// file in the state dir, as MIT's acceptor keeps its rcache, so a restart
// forgets none: an authenticator is written and synced before it is
// accepted, so not even a crash forgets one. A damaged file is replaced
// and every authenticator made before this start refused, which is safe
// whatever it held. It is safe for concurrent use.
type replayCache struct {
	file *replayFile // nil: in memory only
	skew time.Duration
	now  func() time.Time
	max  int // entries in all
	per  int // entries per client

	mu        sync.Mutex
	entries   map[replayTag]replayEntry
	perClient map[clientTag]int
	notBefore int64     // authenticators of earlier times are refused (µs)
	damage    error     // why the file was replaced at open, if it was
	nextSweep time.Time // when expired entries are dropped next
	written   uint64    // records written so far
	closed    bool

	// syncMu orders syncs and compactions of the file: concurrent Adds
	// share one fsync (each waits until its own record is on disk).
	syncMu sync.Mutex
	synced uint64
}

// openReplayCache loads the cache kept at path ("" keeps none: memory
// only, for tests and tools that never serve).
func openReplayCache(path string, skew time.Duration, now func() time.Time) (*replayCache, error) {
	c := &replayCache{skew: skew, now: now, max: maxReplayEntries, per: maxReplayPerClient,
		entries: map[replayTag]replayEntry{}, perClient: map[clientTag]int{}}
	if path == "" {
		return c, nil
	}
	f, recs, damage, err := openReplayFile(path)
	if err != nil {
		return nil, err
	}
	c.file, c.damage = f, damage
	if damage != nil {
		c.notBefore = now().UnixMicro()
	}
	for _, r := range recs {
		if c.alive(r.ctime, now()) {
			c.insert(r.tag, replayEntry{ctime: r.ctime, client: r.client})
		}
	}
	// Start from a file holding the live entries only.
	if err := c.file.rewrite(c.records()); err != nil {
		c.file.close()
		return nil, err
	}
	return c, nil
}

// alive reports whether an authenticator of time ctime (µs) could still
// be accepted: within the skew of now.
func (c *replayCache) alive(ctime int64, now time.Time) bool {
	d := time.Duration(now.UnixMicro()-ctime) * time.Microsecond
	return d <= c.skew && d >= -c.skew
}

// expired reports whether an authenticator of time ctime (µs) is past
// the skew: no longer acceptable, so its entry is not needed.
func (c *replayCache) expired(ctime int64, now time.Time) bool {
	return time.Duration(now.UnixMicro()-ctime)*time.Microsecond > c.skew
}

func (c *replayCache) insert(tag replayTag, e replayEntry) {
	c.entries[tag] = e
	c.perClient[e.client]++
}

// add records an authenticator, or says why it may not be accepted: it
// was seen before, it is older than what the cache can vouch for, the
// cache is full, or the record could not be made durable.
func (c *replayCache) add(tag replayTag, client clientTag, ctime time.Time) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errors.New("replay cache closed")
	}
	now := c.now()
	e := replayEntry{ctime: ctime.UnixMicro(), client: client}
	if err := c.admit(tag, e, now); err != nil {
		c.mu.Unlock()
		return err
	}
	c.insert(tag, e)
	if c.file == nil {
		c.mu.Unlock()
		return nil
	}
	err := c.file.append(replayRecord{tag: tag, client: client, ctime: e.ctime})
	c.written++
	gen := c.written
	c.mu.Unlock()
	if err != nil {
		return err // kept in memory: refusing it again is harmless
	}
	return c.syncTo(gen)
}

// admit checks e against the cache. c.mu is held.
func (c *replayCache) admit(tag replayTag, e replayEntry, now time.Time) error {
	if _, seen := c.entries[tag]; seen {
		return errReplay
	}
	if e.ctime < c.notBefore {
		return errors.New("the authenticator predates this start and the replay cache was damaged: present a new one")
	}
	if now.After(c.nextSweep) || len(c.entries) >= c.max || c.perClient[e.client] >= c.per {
		c.sweep(now)
	}
	if len(c.entries) >= c.max {
		return errReplayFull
	}
	if c.perClient[e.client] >= c.per {
		return fmt.Errorf("%w (this principal made %d)", errReplayFull, c.perClient[e.client])
	}
	return nil
}

// sweep drops the entries whose authenticators expired. c.mu is held.
func (c *replayCache) sweep(now time.Time) {
	for tag, e := range c.entries {
		if c.expired(e.ctime, now) {
			delete(c.entries, tag)
			if c.perClient[e.client]--; c.perClient[e.client] <= 0 {
				delete(c.perClient, e.client)
			}
		}
	}
	c.nextSweep = now.Add(min(c.skew/4, 10*time.Second))
}

// syncTo returns once record gen is on disk: by an fsync of its own, one
// another add made meanwhile, or a compaction that rewrote the file.
func (c *replayCache) syncTo(gen uint64) error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	if c.synced >= gen {
		return nil
	}
	c.mu.Lock()
	target := c.written
	if c.file.wasteful(len(c.entries)) {
		c.sweep(c.now())
		err := c.file.rewrite(c.records())
		c.mu.Unlock()
		if err == nil {
			c.synced = target
		}
		return err
	}
	c.mu.Unlock()
	if err := c.file.sync(); err != nil {
		return err
	}
	c.synced = target
	return nil
}

// records are the live entries as file records. c.mu is held.
func (c *replayCache) records() []replayRecord {
	out := make([]replayRecord, 0, len(c.entries))
	for tag, e := range c.entries {
		out = append(out, replayRecord{tag: tag, client: e.client, ctime: e.ctime})
	}
	return out
}

// close releases the file; later adds fail.
func (c *replayCache) close() error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.file == nil {
		c.closed = true
		return nil
	}
	c.closed = true
	return c.file.close()
}

// ReplayCacheFile is where a box keeps its Kerberos replay cache in its
// state dir.
func ReplayCacheFile(stateDir string) string {
	return filepath.Join(stateDir, "kerberos", "replay-cache")
}

// authenticatorTag is the replay cache's name for req's authenticator.
func authenticatorTag(req *messages.APReq) replayTag {
	sum := sha256.Sum256(req.EncryptedAuthenticator.Cipher)
	var t replayTag
	copy(t[:], sum[:])
	return t
}

// clientTagOf names the authenticator's client principal.
func clientTagOf(a types.Authenticator) clientTag {
	sum := sha256.Sum256([]byte(a.CName.PrincipalNameString() + "@" + a.CRealm))
	var t clientTag
	copy(t[:], sum[:])
	return t
}

// authenticatorTime is the client's time the authenticator carries.
func authenticatorTime(a types.Authenticator) time.Time {
	return a.CTime.Add(time.Duration(a.Cusec) * time.Microsecond)
}
