package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// applyMountOptions sets the mount's flags from -o lists in mount(8)'s
// spelling ("ro,allow_other,cache_dir=/var/cache/x"), as fstab lines and
// systemd .mount units give them: ro and rw, each long flag as key or
// key=value with "_" for "-" (allow_other, dir_ttl=2m, protection=...),
// and the options mount(8) and systemd pass for themselves ignored. An
// option given later wins, over the command line's flags too.
func applyMountOptions(fl *pflag.FlagSet, lists []string) error {
	for _, list := range lists {
		for _, opt := range strings.Split(list, ",") {
			if err := applyMountOption(fl, strings.TrimSpace(opt)); err != nil {
				return err
			}
		}
	}
	return nil
}

func applyMountOption(fl *pflag.FlagSet, opt string) error {
	key, val, hasVal := strings.Cut(opt, "=")
	switch {
	case opt == "" || ignoredMountOption(key, hasVal):
		return nil
	case opt == "ro":
		return fl.Set("read-only", "true")
	case opt == "rw":
		return fl.Set("read-only", "false")
	}
	name := strings.ReplaceAll(key, "_", "-")
	f := fl.Lookup(name)
	if f == nil || name == "options" || name == "help" || f.Hidden {
		return fmt.Errorf("-o %s: unknown mount option (sitebox mount takes ro, rw, allow_other, protection=auth|integrity|privacy, and each of its long flags as key=value with _ for -, e.g. cache_dir=/var/cache/sitebox-mount; see sitebox mount --help)", key)
	}
	if !hasVal {
		if f.Value.Type() != "bool" {
			return fmt.Errorf("-o %s: needs a value: %s=…", key, key)
		}
		val = "true"
	}
	if err := fl.Set(name, val); err != nil {
		return fmt.Errorf("-o %s: %w", opt, err)
	}
	return nil
}

// ignoredMountOption reports whether an option is one mount(8), fstab or
// systemd pass along for themselves: when to mount (auto, noauto,
// _netdev, nofail, x-systemd.*), who may (user, users, owner, group,
// and the user= libmount adds), and the generic flags of a local
// filesystem that change nothing here: the mount is nosuid and nodev
// always (suid and dev do not lift that), atime is the server's, and
// exec is the default (noexec is a flag of its own, --noexec).
func ignoredMountOption(key string, hasVal bool) bool {
	if strings.HasPrefix(key, "x-") {
		return true // x-systemd.*, x-mount.*, x-gvfs-*: for the tools
	}
	if hasVal {
		return key == "comment" || key == "user"
	}
	switch key {
	case "defaults", "auto", "noauto", "nofail", "_netdev", "_rnetdev",
		"user", "users", "nouser", "owner", "group",
		"dev", "nodev", "suid", "nosuid", "exec",
		"atime", "noatime", "relatime", "norelatime", "strictatime", "nostrictatime",
		"diratime", "nodiratime", "lazytime", "nolazytime", "async", "silent", "loud":
		return true
	}
	return false
}
