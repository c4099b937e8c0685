package outbound

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Kerberos is a user's Kerberos credential: the tickets of a credential
// cache (what kinit wrote) and the krb5.conf that says where the realm's
// KDC is. It asks the KDC for service tickets with the cache's TGT and
// keeps them, so a client reconnecting does not ask again. Safe for
// concurrent use.
type Kerberos struct {
	cl        *client.Client
	principal string // "alice@EXAMPLE.ORG"
	expires   time.Time
}

// Principal is the user's principal, "name@REALM".
func (k *Kerberos) Principal() string { return k.principal }

// APReq is a Kerberos AP-REQ for the service principal spn
// ("xrootd/host" or "xrootd/host@REALM"), as XRootD's krb5 protocol
// sends it after "krb5\0".
func (k *Kerberos) APReq(spn string) ([]byte, error) {
	tkt, key, err := k.ticket(spn)
	if err != nil {
		return nil, err
	}
	auth, err := types.NewAuthenticator(k.cl.Credentials.Domain(), k.cl.Credentials.CName())
	if err != nil {
		return nil, fmt.Errorf("kerberos: %w", err)
	}
	req, err := messages.NewAPReq(tkt, key, auth)
	if err != nil {
		return nil, fmt.Errorf("kerberos: AP-REQ for %s: %w", spn, err)
	}
	return req.Marshal()
}

// Negotiate is the value of an "Authorization" header for the HTTP
// service principal spn ("HTTP/host"): SPNEGO around a Kerberos AP-REQ,
// as curl --negotiate and browsers send it.
func (k *Kerberos) Negotiate(spn string) (string, error) {
	if _, _, err := k.ticket(spn); err != nil {
		return "", err
	}
	ct, err := spnego.SPNEGOClient(k.cl, trimRealm(spn)).InitSecContext()
	if err != nil {
		return "", fmt.Errorf("kerberos: SPNEGO for %s: %w", spn, err)
	}
	b, err := ct.Marshal()
	if err != nil {
		return "", fmt.Errorf("kerberos: SPNEGO for %s: %w", spn, err)
	}
	return "Negotiate " + base64.StdEncoding.EncodeToString(b), nil
}

// ticket is the service ticket for spn, from the cache or the KDC.
func (k *Kerberos) ticket(spn string) (messages.Ticket, types.EncryptionKey, error) {
	if !k.expires.IsZero() && time.Now().After(k.expires) {
		return messages.Ticket{}, types.EncryptionKey{}, fmt.Errorf("kerberos: the tickets of %s expired at %s (run kinit again)", k.principal, k.expires.UTC().Format(time.RFC3339))
	}
	tkt, key, err := k.cl.GetServiceTicket(trimRealm(spn))
	if err != nil {
		return tkt, key, fmt.Errorf("kerberos: no ticket of %s for %s: %w", k.principal, spn, err)
	}
	return tkt, key, nil
}

// trimRealm drops "@REALM" from a service principal: the client asks its
// own realm's KDC (or the one krb5.conf's domain_realm names for the
// host), as MIT's library does for a host-based name.
func trimRealm(spn string) string {
	name, _, _ := strings.Cut(spn, "@")
	return name
}

// NewKerberos reads a credential cache's content (the file format kinit
// writes) with the Kerberos configuration conf.
func NewKerberos(ccache []byte, conf *config.Config) (*Kerberos, error) {
	var cc credentials.CCache
	if err := cc.Unmarshal(ccache); err != nil {
		return nil, fmt.Errorf("not a Kerberos credential cache: %w", err)
	}
	cl, err := client.NewFromCCache(&cc, conf, client.DisablePAFXFAST(true))
	if err != nil {
		return nil, fmt.Errorf("credential cache of %s: %w (run kinit)", cc.GetClientPrincipalName().PrincipalNameString(), err)
	}
	k := &Kerberos{cl: cl, principal: cc.GetClientPrincipalName().PrincipalNameString() + "@" + cc.GetClientRealm()}
	tgs := types.NewPrincipalName(nametype.KRB_NT_SRV_INST, "krbtgt/"+cc.GetClientRealm())
	if tgt, ok := cc.GetEntry(tgs); ok {
		k.expires = tgt.EndTime
	}
	return k, nil
}

// KerberosConfigFile is the krb5.conf the Kerberos library reads:
// $KRB5_CONFIG (the first file of its list that exists), else
// /etc/krb5.conf.
func KerberosConfigFile(getenv func(string) string) string {
	for _, f := range strings.Split(getenv("KRB5_CONFIG"), ":") {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err == nil {
			return f
		}
	}
	return "/etc/krb5.conf"
}

// loadConfig reads a krb5.conf. Directives the Go library does not know
// (MIT has many more) are left out, as MIT's library ignores those it
// does not know; the rest is used.
func loadConfig(name string) (*config.Config, error) {
	conf, err := config.Load(name)
	var unsupported config.UnsupportedDirective
	if err != nil && !(errors.As(err, &unsupported) && conf != nil) {
		return nil, fmt.Errorf("kerberos: configuration %s: %w", name, err)
	}
	return conf, nil
}

// KerberosFile is a user's credential cache file, read again when it
// changes (kinit renewed it), checked (OwnedSecretFile) at every read.
type KerberosFile struct {
	file, conf string
	uid        int // -1: the file is not checked (a test's own)

	mu    sync.Mutex
	stamp [3]int64 // inode, size, mtime of the file cur was read from
	cur   *Kerberos
}

// NewKerberosFile is the credential cache file of uid with the
// Kerberos configuration file conf.
func NewKerberosFile(file string, uid int, conf string) *KerberosFile {
	return &KerberosFile{file: file, conf: conf, uid: uid}
}

// File is the credential cache's name.
func (f *KerberosFile) File() string { return f.file }

// Get is the credential, read again if the file changed since.
func (f *KerberosFile) Get() (*Kerberos, error) {
	fd, err := openSecret(f.file, f.uid)
	if err != nil {
		return nil, fmt.Errorf("kerberos: %w", err)
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("kerberos: %w", err)
	}
	var ino int64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = int64(st.Ino)
	}
	stamp := [3]int64{ino, fi.Size(), fi.ModTime().UnixNano()}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur != nil && stamp == f.stamp {
		return f.cur, nil
	}
	b, err := io.ReadAll(io.LimitReader(fd, maxCCache+1))
	if err != nil {
		return nil, fmt.Errorf("kerberos: %s: %w", f.file, err)
	}
	if len(b) > maxCCache {
		return nil, fmt.Errorf("kerberos: %s is larger than %d bytes: not a credential cache", f.file, maxCCache)
	}
	conf, err := loadConfig(f.conf)
	if err != nil {
		return nil, err
	}
	k, err := NewKerberos(b, conf)
	if err != nil {
		return nil, fmt.Errorf("kerberos: %s: %w", f.file, err)
	}
	f.cur, f.stamp = k, stamp
	return k, nil
}
