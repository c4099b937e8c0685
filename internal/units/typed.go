package units

import (
	"fmt"
	"strconv"
	"time"
)

// Size is a byte count as the config file writes it: "1GiB", "512MiB",
// "50MB" or a plain number. TOML decodes straight into it, so a role's
// settings hold the number and no second parse can disagree with the
// first.
type Size int64

// UnmarshalText reads a size as ParseSize does.
func (s *Size) UnmarshalText(b []byte) error {
	n, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = Size(n)
	return nil
}

// MarshalText writes the size exactly, with the largest binary suffix
// that divides it ("1GiB", "64KiB", "1000").
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s Size) String() string {
	n := int64(s)
	for _, u := range []struct {
		suf string
		n   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.suf
		}
	}
	return strconv.FormatInt(n, 10)
}

// Bytes is the size as a byte count.
func (s Size) Bytes() int64 { return int64(s) }

// Duration is a time span as the config file writes it: "10s", "5m",
// "1h30m" (Go's time.ParseDuration).
type Duration time.Duration

// UnmarshalText reads a duration as time.ParseDuration does.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (examples: 30s, 10m, 1h)", string(b))
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as time.Duration prints it.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

func (d Duration) String() string { return time.Duration(d).String() }

// D is the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }
