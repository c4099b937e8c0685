package local

import (
	"os"
	"strings"
	"testing"
)

// A container job's command is the runtime's exec of the image, with
// the sandbox bound and as the working directory; others run as they are.
func TestJobCommandContainer(t *testing.T) {
	sandbox := t.TempDir()
	out, _ := os.CreateTemp(t.TempDir(), "o")
	defer out.Close()
	p := &execPlan{Executable: "/bin/echo", Arguments: []string{"a b", "c"}, Container: "/cvmfs/img:9", Runtime: "/usr/bin/apptainer"}
	cmd := jobCommand(sandbox, p, out, out)
	want := "/usr/bin/apptainer exec --no-home --bind " + sandbox + " --pwd " + sandbox + " /cvmfs/img:9 /bin/echo a b c"
	if got := strings.Join(cmd.Args, " "); cmd.Path != "/usr/bin/apptainer" || got != want {
		t.Errorf("command %s: %q, want %q", cmd.Path, got, want)
	}
	p.Container = ""
	if cmd := jobCommand(sandbox, p, out, out); cmd.Path != "/bin/echo" || len(cmd.Args) != 3 {
		t.Errorf("without a container: %s %q", cmd.Path, cmd.Args)
	}
}
