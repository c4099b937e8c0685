package mount

import (
	"container/list"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"sitebox/internal/outbound"
	"sitebox/internal/remote"
	"sitebox/internal/store"
	"sitebox/internal/x509grid"
)

// View is how one caller reaches the server: with which credential, and
// through which stores.
type View struct {
	// Key names the credential; the metadata cache is kept per key, so
	// callers with different rights never share a listing.
	Key string
	// Who describes the caller and credential for the log.
	Who string
	// Meta answers stat and list, and takes changes and uploads.
	Meta store.Store
	// Data opens files for reading: Meta itself, or a local cache in
	// front of it.
	Data store.Store

	refs atomic.Int64 // open files using the view's clients
}

// Identities gives each caller its view.
type Identities interface {
	// For is the view of the caller uid; an error refuses the caller
	// (EACCES) and says why, for the mount's log.
	For(uid uint32) (*View, error)
	Close() error
}

// Single is the view of a mount for one user: every caller gets it (the
// kernel lets no other user in without allow_other).
type Single struct {
	V      *View
	Closer io.Closer // the view's clients (and cache), closed with the mount
}

func (s Single) For(uint32) (*View, error) { return s.V, nil }

func (s Single) Close() error {
	if s.Closer == nil {
		return nil
	}
	return s.Closer.Close()
}

// Credential is what one caller's clients present: each part nil when
// the caller has none.
type Credential struct {
	Token    func() string
	Proxy    func() (*x509grid.Credential, error)
	Kerberos func() (*outbound.Kerberos, error)
}

// Apply puts the credential into a client's options, replacing every
// credential they had: a caller never presents the mount's own.
func (c Credential) Apply(o *outbound.Options) {
	o.Token, o.TokenFunc, o.Proxy, o.Kerberos = "", c.Token, c.Proxy, c.Kerberos
}

// PerCaller finds each caller's own credential, as the grid's clients
// would for that user, and keeps an upstream client per credential.
type PerCaller struct {
	// Dial makes a client with the mount's options and the credential
	// given (all nil for none).
	Dial func(Credential) (remote.Client, error)
	// Front, when set, is the store a view's reads go to instead of its
	// client, and what closes it: a local cache of the view's own,
	// filled with that credential only, for key (the view's Key).
	Front func(key string, cred Credential) (store.Store, io.Closer, error)
	// MaxClients bounds the clients kept; past it the least recently
	// used one without open files is closed.
	MaxClients int
	// Krb5Conf is the Kerberos configuration (krb5.conf) callers'
	// credential caches are used with.
	Krb5Conf string

	mu      sync.Mutex
	lru     *list.List // of *View, most recently used first
	byKey   map[string]*list.Element
	closers map[*View]func() error
}

// callerFiles are the files of a caller's credential, "" for none.
type callerFiles struct{ token, proxy, ccache string }

// key names the credential: the caller and its files; every caller
// without one shares the anonymous view.
func (f callerFiles) key(uid int) string {
	if f == (callerFiles{}) {
		return "anonymous"
	}
	key := fmt.Sprintf("uid %d", uid)
	for _, p := range [][2]string{{"token", f.token}, {"proxy", f.proxy}, {"krb5", f.ccache}} {
		if p[1] != "" {
			key += " " + p[0] + " " + p[1]
		}
	}
	return key
}

// For finds uid's credential (a bearer token in
// /run/user/<uid>/bt_u<uid> or /tmp/bt_u<uid>, an X.509 proxy in
// /tmp/x509up_u<uid>, a Kerberos credential cache in /tmp/krb5cc_<uid>,
// each owned by uid and writable by nobody else, the cache readable by
// nobody else) and returns the view of it; a caller without one reads
// anonymously.
func (p *PerCaller) For(uid uint32) (*View, error) {
	u := int(uid)
	files, err := findCallerCredential(u)
	if err != nil {
		return nil, err
	}
	key := files.key(u)
	return p.view(key, func() (backend, error) {
		cred := p.credential(files, u)
		c, err := p.Dial(cred)
		if err != nil || p.Front == nil {
			return backend{meta: c, data: c, close: c}, err
		}
		data, closer, err := p.Front(key, cred)
		if err != nil {
			c.Close()
			return backend{}, err
		}
		return backend{meta: c, data: data, close: closeBoth{closer, c}}, nil
	})
}

// credential reads the files found for uid, each checked again at
// every use: a file replaced since must still be uid's own.
func (p *PerCaller) credential(files callerFiles, uid int) Credential {
	var c Credential
	if files.token != "" {
		c.Token = callerToken(files.token, uid)
	}
	if files.proxy != "" {
		cf := x509grid.NewCredentialFile(files.proxy)
		c.Proxy = func() (*x509grid.Credential, error) {
			if err := outbound.OwnedFile(files.proxy, uid); err != nil {
				return nil, err
			}
			return cf.Get()
		}
	}
	if files.ccache != "" {
		c.Kerberos = outbound.NewKerberosFile(files.ccache, uid, p.Krb5Conf).Get
	}
	return c
}

// backend is what a view's stores are and what closes them.
type backend struct {
	meta, data store.Store
	close      io.Closer
}

// closeBoth closes a cache before the client beside it.
type closeBoth [2]io.Closer

func (c closeBoth) Close() error { return errors.Join(c[0].Close(), c[1].Close()) }

// findCallerCredential names uid's token, proxy and Kerberos credential
// cache files; a file that is there but may not be used (someone
// else's, writable by others, a credential cache readable by others)
// refuses the caller, so nobody reads as another user, nor anonymously
// by mistake.
func findCallerCredential(uid int) (callerFiles, error) {
	var f callerFiles
	var err error
	for _, name := range outbound.UserTokenFiles(outbound.OtherUserEnv(uid), uid) {
		if f.token, err = usable(name, uid, outbound.OwnedFile); f.token != "" || err != nil {
			break
		}
	}
	if err == nil {
		f.proxy, err = usable(outbound.UserProxyPath(uid), uid, outbound.OwnedFile)
	}
	if err == nil {
		f.ccache, err = usable(outbound.UserCCachePath(uid), uid, outbound.OwnedSecretFile)
	}
	return f, err
}

// usable is name when check passes for uid, "" when there is no such
// file, and check's error otherwise.
func usable(name string, uid int, check func(string, int) error) (string, error) {
	switch err := check(name, uid); {
	case err == nil:
		return name, nil
	case isNotExist(err):
		return "", nil
	default:
		return "", err
	}
}

// callerToken reads the token from file each time a connection needs
// one, so a renewed token is used from then on; the file is checked
// again each time.
func callerToken(file string, uid int) func() string {
	return func() string {
		t, err := outbound.ReadTokenFile(file, uid)
		if err != nil {
			return ""
		}
		return t
	}
}

func (p *PerCaller) view(key string, dial func() (backend, error)) (*View, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byKey == nil {
		p.lru, p.byKey, p.closers = list.New(), map[string]*list.Element{}, map[*View]func() error{}
	}
	if e := p.byKey[key]; e != nil {
		p.lru.MoveToFront(e)
		return e.Value.(*View), nil
	}
	b, err := dial()
	if err != nil {
		return nil, err
	}
	v := &View{Key: key, Who: key, Meta: b.meta, Data: b.data}
	p.byKey[key] = p.lru.PushFront(v)
	p.closers[v] = b.close.Close
	p.trimLocked()
	return v, nil
}

// trimLocked closes the least recently used clients past MaxClients,
// skipping those with files open and the one just asked for.
func (p *PerCaller) trimLocked() {
	limit := max(p.MaxClients, 1)
	for e := p.lru.Back(); e != nil && e != p.lru.Front() && p.lru.Len() > limit; {
		prev := e.Prev()
		if v := e.Value.(*View); v.refs.Load() == 0 {
			p.lru.Remove(e)
			delete(p.byKey, v.Key)
			p.closers[v]()
			delete(p.closers, v)
		}
		e = prev
	}
}

// Close closes every client.
func (p *PerCaller) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for v, c := range p.closers {
		c()
		delete(p.closers, v)
	}
	p.lru, p.byKey = list.New(), map[string]*list.Element{}
	return nil
}
