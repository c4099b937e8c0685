package box

import (
	"fmt"
	"strings"
)

// refuseJobReadable keeps a jobs box from starting while an account its
// jobs run as could read an export pool, the cache dir or a secret file
// straight off the disk, past every token check. `sitebox config check`
// and serve find the same through config.Validate; this holds for every
// box, whoever builds it.
func (b *Box) refuseJobReadable() error {
	ps := b.cfg.JobReadable()
	if len(ps) == 0 {
		return nil
	}
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.String()
	}
	return fmt.Errorf("jobs could read what the box keeps from them: %s", strings.Join(msgs, "; "))
}
