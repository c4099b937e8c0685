package jobs

import (
	"fmt"
	"time"
)

// The defaults of [jobs], written down once: Settings.Defaults fills the
// file's settings with them, newService a Service made without a file.
const (
	defaultHalfLife     = 24 * time.Hour
	defaultPreemptGrace = 30 * time.Second
	defaultRetention    = 7 * 24 * time.Hour
)

// Retention is how long an ended job's sandbox is kept, as the file
// writes it: a duration ("168h") or "forever" (Forever).
type Retention time.Duration

// Forever keeps sandboxes until their owner removes them.
const Forever Retention = -1

// UnmarshalText reads a duration or "forever".
func (r *Retention) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "forever" {
		*r = Forever
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration (examples: 24h, 168h) or \"forever\"", s)
	}
	if d <= 0 {
		// Negative values would read as Forever, or as nothing.
		return fmt.Errorf("%q is not a positive duration (e.g. \"168h\") or \"forever\"", s)
	}
	*r = Retention(d)
	return nil
}

// MarshalText writes the retention as the file would.
func (r Retention) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

func (r Retention) String() string {
	if r == Forever {
		return "forever"
	}
	return time.Duration(r).String()
}
