package box

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"sitebox/internal/director"
)

// DowntimeFile, in the state dir, lists a box's planned downtimes; the
// running box reads it with every advertisement, so `sitebox downtime
// add` takes effect without a restart.
const DowntimeFile = "downtime.json"

// LoadDowntimes reads the planned downtimes of the box with stateDir
// (none when the file does not exist).
func LoadDowntimes(stateDir string) ([]director.Downtime, error) {
	b, err := os.ReadFile(filepath.Join(stateDir, DowntimeFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ds []director.Downtime
	if err := json.Unmarshal(b, &ds); err != nil {
		return nil, fmt.Errorf("%s: %w", DowntimeFile, err)
	}
	return ds, nil
}

// SaveDowntimes writes them, dropping the ones that have ended.
func SaveDowntimes(stateDir string, ds []director.Downtime) error {
	now := time.Now()
	var keep []director.Downtime
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
	tmp := filepath.Join(stateDir, DowntimeFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(stateDir, DowntimeFile))
}

// currentDowntime is the window to advertise: the active one, else the
// next one (the director acts on it only once it starts).
func (b *Box) currentDowntime() *director.Downtime {
	ds, err := LoadDowntimes(b.cfg.Server.StateDir)
	if err != nil {
		b.log.Warn("cannot read planned downtimes", "err", err)
		return nil
	}
	now := time.Now()
	for _, d := range ds {
		if d.End.After(now) {
			return &d
		}
	}
	return nil
}
