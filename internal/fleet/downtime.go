package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"sitebox/internal/atomicfile"
)

// DowntimeFile, in the state dir, lists a box's planned downtimes; the
// running box reads it with every advertisement, so `sitebox downtime
// add` takes effect without a restart.
const DowntimeFile = "downtime.json"

// LoadDowntimes reads the planned downtimes of the box with stateDir
// (none when the file does not exist).
func LoadDowntimes(stateDir string) ([]Downtime, error) {
	b, err := os.ReadFile(filepath.Join(stateDir, DowntimeFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ds []Downtime
	if err := json.Unmarshal(b, &ds); err != nil {
		return nil, fmt.Errorf("%s: %w", DowntimeFile, err)
	}
	return ds, nil
}

// SaveDowntimes writes them, dropping the ones that have ended.
func SaveDowntimes(stateDir string, ds []Downtime) error {
	now := time.Now()
	var keep []Downtime
	for _, d := range ds {
		if d.End.After(now) {
			keep = append(keep, d)
		}
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].Start.Before(keep[j].Start) })
	b, err := json.MarshalIndent(keep, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(stateDir, DowntimeFile), b, 0o644)
}

// Downtime is a planned maintenance window.
type Downtime struct {
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Reason string    `json:"reason"`
}

// Active reports whether the window covers now.
func (d *Downtime) Active(now time.Time) bool {
	return d != nil && !now.Before(d.Start) && now.Before(d.End)
}

// CurrentDowntime is the window a box advertises: the active one, else
// the next one (the director acts on it only once it starts).
func CurrentDowntime(stateDir string) (*Downtime, error) {
	ds, err := LoadDowntimes(stateDir)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for _, d := range ds {
		if d.End.After(now) {
			return &d, nil
		}
	}
	return nil, nil
}
