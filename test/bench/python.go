package bench

import "os"

// defaultPython is the Python a benchmark runs its readers with when
// none is given: $SITEBOX_PYTHON (the set-up's virtual environment, with
// the XRootD bindings and uproot), else python3 on PATH.
func defaultPython() string {
	if py := os.Getenv("SITEBOX_PYTHON"); py != "" {
		return py
	}
	return "python3"
}
