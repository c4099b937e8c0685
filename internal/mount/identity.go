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

// PerCaller finds each caller's own credential, as the grid's clients
// would for that user, and keeps an upstream client per credential.
type PerCaller struct {
	// Dial makes a client with the mount's options and the credential
	// given (nil for none).
	Dial func(token func() string, proxy func() (*x509grid.Credential, error)) (remote.Client, error)
	// Front, when set, is the store a view's reads go to instead of its
	// client, and what closes it: a local cache of the view's own,
	// filled with that credential only, for key (the view's Key).
	Front func(key string, token func() string, proxy func() (*x509grid.Credential, error)) (store.Store, io.Closer, error)
	// MaxClients bounds the clients kept; past it the least recently
	// used one without open files is closed.
	MaxClients int

	mu      sync.Mutex
	lru     *list.List // of *View, most recently used first
	byKey   map[string]*list.Element
	closers map[*View]func() error
}

// For finds uid's credential (a bearer token in
// /run/user/<uid>/bt_u<uid> or /tmp/bt_u<uid>, an X.509 proxy in
// /tmp/x509up_u<uid>, each owned by uid and writable by nobody else) and
// returns the view of it; a caller without one reads anonymously.
func (p *PerCaller) For(uid uint32) (*View, error) {
	u := int(uid)
	tokFile, proxyFile, err := findCallerCredential(u)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("uid %d", uid)
	switch {
	case tokFile != "" && proxyFile != "":
		key += " token " + tokFile + " proxy " + proxyFile
	case tokFile != "":
		key += " token " + tokFile
	case proxyFile != "":
		key += " proxy " + proxyFile
	default:
		key = "anonymous" // every caller without a credential shares one view
	}
	return p.view(key, func() (backend, error) {
		var tok func() string
		var proxy func() (*x509grid.Credential, error)
		if tokFile != "" {
			tok = callerToken(tokFile, u)
		}
		if proxyFile != "" {
			cf := x509grid.NewCredentialFile(proxyFile)
			proxy = func() (*x509grid.Credential, error) {
				if err := outbound.OwnedFile(proxyFile, u); err != nil {
					return nil, err
				}
				return cf.Get()
			}
		}
		c, err := p.Dial(tok, proxy)
		if err != nil || p.Front == nil {
			return backend{meta: c, data: c, close: c}, err
		}
		data, closer, err := p.Front(key, tok, proxy)
		if err != nil {
			c.Close()
			return backend{}, err
		}
		return backend{meta: c, data: data, close: closeBoth{closer, c}}, nil
	})
}

// backend is what a view's stores are and what closes them.
type backend struct {
	meta, data store.Store
	close      io.Closer
}

// closeBoth closes a cache before the client beside it.
type closeBoth [2]io.Closer

func (c closeBoth) Close() error { return errors.Join(c[0].Close(), c[1].Close()) }

// findCallerCredential names uid's token file and proxy file, "" for
// none; a file that is there but may not be used (someone else's, or
// writable by others) refuses the caller, so nobody reads as another
// user, nor anonymously by mistake.
func findCallerCredential(uid int) (tokFile, proxyFile string, err error) {
	for _, f := range outbound.UserTokenFiles(outbound.OtherUserEnv(uid), uid) {
		if err := outbound.OwnedFile(f, uid); err == nil {
			tokFile = f
			break
		} else if !isNotExist(err) {
			return "", "", err
		}
	}
	f := outbound.UserProxyPath(uid)
	if err := outbound.OwnedFile(f, uid); err == nil {
		proxyFile = f
	} else if !isNotExist(err) {
		return "", "", err
	}
	return tokFile, proxyFile, nil
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
