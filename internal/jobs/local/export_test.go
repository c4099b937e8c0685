package local

import "time"

// What the external tests (package local_test) reach inside.
type ExecPlan = execPlan

var (
	WriteJSONAtomic = writeJSONAtomic
	ControlFile     = controlFile
	ControlDir      = controlDir
)

const ExecFile = execFile

// SweepFiles sweeps what uid owns in places, within the bounds given.
func SweepFiles(uid, gid uint32, maxEntries int, within time.Duration, places []string) error {
	return newSweeper(uid, gid, maxEntries, within).run(places)
}

var SweepSysV = sweepSysV

const SweepMaxDepth = sweepMaxDepth
