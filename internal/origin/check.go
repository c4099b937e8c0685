package origin

import (
	"fmt"
	"os"
	"strings"

	"sitebox/internal/problem"
	"sitebox/internal/store"
)

// Exports are the [[export]] tables of a config file, in file order.
type Exports []Export

// Validate returns every problem in the exports, keyed
// "export[N].field", looking at the disk to check the pools exist (a
// missing pool is the most common first-day mistake).
func (es Exports) Validate() []problem.Problem {
	var ps []problem.Problem
	seen := map[string]int{}
	for i, e := range es {
		key := fmt.Sprintf("export[%d]", i+1)
		add := func(sub, format string, args ...any) {
			ps = append(ps, problem.Problem{Key: key + sub, Msg: fmt.Sprintf(format, args...)})
		}
		clean, err := store.CleanPath(e.Prefix)
		switch {
		case e.Prefix == "":
			add(".prefix", "missing: the namespace path this export serves, e.g. \"/store\"")
		case err != nil || !strings.HasPrefix(e.Prefix, "/"):
			add(".prefix", "%q must be an absolute namespace path without '..'", e.Prefix)
		case clean != e.Prefix:
			add(".prefix", "%q should be written %q", e.Prefix, clean)
		}
		if j, dup := seen[clean]; dup && clean != "" {
			add(".prefix", "%q is already exported by export[%d]", clean, j)
		}
		seen[clean] = i + 1
		if len(e.Pools) == 0 {
			add(".pools", "missing: at least one storage directory")
		}
		for _, dir := range e.Pools {
			if !strings.HasPrefix(dir, "/") {
				add(".pools", "%q must be an absolute directory", dir)
				continue
			}
			fi, err := os.Stat(dir)
			switch {
			case err != nil:
				add(".pools", "pool %s: %v", dir, problem.PathCause(err))
			case !fi.IsDir():
				add(".pools", "pool %s is not a directory", dir)
			}
		}
	}
	return ps
}
