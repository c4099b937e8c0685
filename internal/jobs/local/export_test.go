package local

// What the external tests (package local_test) reach inside.
type ExecPlan = execPlan

var (
	WriteJSONAtomic = writeJSONAtomic
	ControlFile     = controlFile
	ControlDir      = controlDir
)

const ExecFile = execFile
