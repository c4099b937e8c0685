package main

import (
	"errors"
	"fmt"
	"strings"
)

// mountHelperName is the program mount(8) runs for fstab lines and
// systemd .mount units of type fuse.sitebox: the package links it
// (/sbin/mount.fuse.sitebox) to the sitebox program, which then
// acts as the helper.
const mountHelperName = "mount.fuse.sitebox"

// mountHelperArgs turns the arguments mount(8) gives a helper,
// "SOURCE DIR [-sfnvi] [-N ns] [-o OPTIONS] [-t TYPE]", into the ones of
// `sitebox mount --background`. fake is mount -f: check, mount nothing.
func mountHelperArgs(argv []string) (args []string, fake bool, err error) {
	var pos, opts []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-o" || a == "-t" || a == "-N":
			if i+1 == len(argv) {
				return nil, false, fmt.Errorf("%s needs a value", a)
			}
			i++
			switch a {
			case "-o":
				opts = append(opts, argv[i])
			case "-t":
				if t := argv[i]; t != "fuse.sitebox" && t != "sitebox" {
					return nil, false, fmt.Errorf("-t %s: this helper mounts fuse.sitebox only", t)
				}
			case "-N":
				return nil, false, errors.New("-N: mounting into another namespace is not supported")
			}
		case strings.HasPrefix(a, "-o"):
			opts = append(opts, a[2:])
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// -s sloppy, -n no mtab, -v verbose, -i no further helper:
			// nothing to do here; -f fake.
			for _, c := range a[1:] {
				switch c {
				case 'f':
					fake = true
				case 's', 'n', 'v', 'i':
				default:
					return nil, false, fmt.Errorf("-%c: unknown option from mount(8)", c)
				}
			}
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) != 2 {
		return nil, false, fmt.Errorf("usage: %s URL DIR [-o OPTIONS] (as mount(8) runs it for type fuse.sitebox)", mountHelperName)
	}
	args = []string{"mount", "--background"}
	for _, o := range opts {
		args = append(args, "-o", o)
	}
	return append(args, "--", pos[0], pos[1]), fake, nil
}
