package origin

import "golang.org/x/sys/unix"

// renameOver renames the entry base in fromDir to base2 in toDir,
// replacing what is there, as rename(2) does. When a regular file is
// replaced by another, the two are exchanged instead (RENAME_EXCHANGE)
// and the one displaced is then unlinked: readers see the same atomic
// switch from the old file to the new, but ext4 does not first push all
// of the new file's delayed-allocation data to the disk, as it does on
// a rename(2) over an existing file (auto_da_alloc). That flush kept an
// upload or copy landing over a 1 GiB file waiting one to two seconds;
// a file landing at a new name never had it, and the box does not sync
// a landing file either way.
func renameOver(fromDir int, base string, toDir int, base2 string, file bool) error {
	var st unix.Stat_t
	if !file || unix.Fstatat(toDir, base2, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return unix.Renameat(fromDir, base, toDir, base2)
	}
	if unix.Renameat2(fromDir, base, toDir, base2, unix.RENAME_EXCHANGE) != nil {
		// A file system without the exchange, or the destination
		// changed since it was looked at: the plain rename decides.
		return unix.Renameat(fromDir, base, toDir, base2)
	}
	err := unix.Unlinkat(fromDir, base, 0)
	if err == nil {
		return nil
	}
	// The displaced entry stays (a directory put there meanwhile, or the
	// unlink failed): exchange back, so that the source keeps its name
	// and the plain rename gives its answer.
	if unix.Renameat2(fromDir, base, toDir, base2, unix.RENAME_EXCHANGE) != nil {
		return err
	}
	return unix.Renameat(fromDir, base, toDir, base2)
}
