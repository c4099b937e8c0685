package box

import (
	"fmt"

	"sitebox/internal/krb5auth"
)

// buildKerberos loads [auth.kerberos]: the keytab and realm mappings,
// and the replay cache in the state dir (so no restart reopens the door
// to a captured credential). A box without it takes no Kerberos
// credentials.
func (b *Box) buildKerberos() error {
	k := &b.cfg.Auth.Kerberos
	if !k.Enabled() {
		return nil
	}
	kc := k.Krb5(b.cfg.Auth.Skew())
	kc.ReplayCache = krb5auth.ReplayCacheFile(b.cfg.Server.StateDir)
	a, err := krb5auth.New(kc, b.log)
	if err != nil {
		return fmt.Errorf("auth.kerberos: %w", err)
	}
	b.krb5 = a
	b.closers = append(b.closers, a.Close)
	return nil
}
