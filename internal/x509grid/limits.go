package x509grid

// Limits bound the work a credential can cause. A chain comes from an
// unauthenticated client, so every count and size has a ceiling well
// above what real credentials use; parsing is linear in the input and
// the number of signature checks is bounded by MaxChain plus MaxCADepth.
// A zero field takes its default.
type Limits struct {
	// MaxInput is the largest PEM or DER input to VerifyPEM/VerifyDER
	// (default 256 KiB; a VOMS proxy of three VOs is about 20 KiB).
	MaxInput int
	// MaxChain is the most certificates a client may present: proxies
	// and the end-entity certificate, plus CA certificates sent along
	// (default 12).
	MaxChain int
	// MaxCertSize is the largest certificate, DER (default 64 KiB).
	MaxCertSize int
	// MaxCADepth is the most CA certificates from an end-entity
	// certificate to its root (default 8).
	MaxCADepth int
	// MaxACs is the most attribute certificates in one VOMS extension
	// (default 8).
	MaxACs int
	// MaxFQANs is the most FQANs in one attribute certificate
	// (default 256), MaxFQANLength the longest (default 512 bytes).
	MaxFQANs      int
	MaxFQANLength int
	// MaxACCerts is the most VOMS server certificates an AC may embed
	// (default 4).
	MaxACCerts int
	// MaxCADirFiles is the most entries of the CA directory and of each
	// vomsdir directory read (default 10000); MaxCADirFileSize the largest
	// certificate or .lsc file read from them (default 1 MiB) and
	// MaxCRLSize the largest CRL (default 64 MiB).
	MaxCADirFiles    int
	MaxCADirFileSize int
	MaxCRLSize       int
	// MaxIssuers is the most CA certificates sharing one subject name
	// that are tried as a certificate's issuer (default 8).
	MaxIssuers int
}

func (l Limits) withDefaults() Limits {
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.MaxInput, 256<<10)
	set(&l.MaxChain, 12)
	set(&l.MaxCertSize, 64<<10)
	set(&l.MaxCADepth, 8)
	set(&l.MaxACs, 8)
	set(&l.MaxFQANs, 256)
	set(&l.MaxFQANLength, 512)
	set(&l.MaxACCerts, 4)
	set(&l.MaxCADirFiles, 10000)
	set(&l.MaxCADirFileSize, 1<<20)
	set(&l.MaxCRLSize, 64<<20)
	set(&l.MaxIssuers, 8)
	return l
}
