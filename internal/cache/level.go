package cache

import (
	"fmt"
	"strconv"
	"strings"

	"sitebox/internal/units"
)

// A watermark is a fraction of the cache filesystem (0 < f ≤ 1, written
// "90%") or an absolute amount used by the cache itself (above 1): the
// purge compares usage with it as such (see excess). The file's text is
// read once, into that number.

// ByteLevel is a bytes watermark: "90%" or a size ("500GiB").
type ByteLevel float64

// FileLevel is a files watermark: "90%" of the inodes or a number of
// cached files ("1000000").
type FileLevel float64

// UnmarshalText reads "90%" or a size.
func (l *ByteLevel) UnmarshalText(b []byte) error {
	v, err := parseLevel(string(b), true)
	*l = ByteLevel(v)
	return err
}

// UnmarshalText reads "90%" or a count.
func (l *FileLevel) UnmarshalText(b []byte) error {
	v, err := parseLevel(string(b), false)
	*l = FileLevel(v)
	return err
}

// MarshalText writes the level as the file would: "90%" or the amount.
func (l ByteLevel) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// MarshalText writes the level as the file would: "90%" or the count.
func (l FileLevel) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

func (l ByteLevel) String() string { return formatLevel(float64(l), true) }
func (l FileLevel) String() string { return formatLevel(float64(l), false) }

// parseLevel reads "90%" or, with size true, "500GiB", else a count.
func parseLevel(s string, size bool) (float64, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f <= 0 || f > 100 {
			return 0, fmt.Errorf("%q is not a percentage from 0 to 100", s)
		}
		return f / 100, nil
	}
	var n int64
	var err error
	if size {
		n, err = units.ParseSize(s)
	} else {
		n, err = strconv.ParseInt(s, 10, 64)
	}
	if err != nil || n <= 1 {
		return 0, fmt.Errorf("%q is neither a percentage (\"90%%\") nor an amount above 1", s)
	}
	return float64(n), nil
}

func formatLevel(v float64, size bool) string {
	switch {
	case v == 0:
		return ""
	case v <= 1:
		return strconv.FormatFloat(v*100, 'g', 12, 64) + "%"
	case size:
		return units.Size(v).String()
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// fraction reports whether a level is a share of the filesystem.
func fraction(v float64) bool { return v > 0 && v <= 1 }
