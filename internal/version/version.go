// Package version tells which build of sitebox is running: the module
// version or VCS revision the Go toolchain stamped into the binary, unless
// the build overrides it with
//
//	go build -ldflags "-X sitebox/internal/version.override=v1.2.3"
package version

import "runtime/debug"

// override is set only by the linker (-X); it stays a string variable
// because -X can set nothing else. Nothing at run time writes it.
var override string

// String is the running build's version: the ldflags override, else the
// main module's version ("v1.2.3" when installed with go install), else
// the VCS revision (12 hex digits, "+dirty" for a modified tree), else
// "dev".
func String() string {
	if override != "" {
		return override
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}
