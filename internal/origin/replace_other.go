//go:build !linux

package origin

import "golang.org/x/sys/unix"

// renameOver renames the entry base in fromDir to base2 in toDir,
// replacing what is there (see replace_linux.go).
func renameOver(fromDir int, base string, toDir int, base2 string, _ bool) error {
	return unix.Renameat(fromDir, base, toDir, base2)
}
