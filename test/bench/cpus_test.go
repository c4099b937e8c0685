package bench

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestPlanFor(t *testing.T) {
	two, four := []int{0, 1}, []int{0, 1, 2, 3}
	for _, tc := range []struct {
		spec            string
		avail           []int
		readers, rest   string
		wantErrContains string
	}{
		{spec: "auto", avail: two},
		{spec: "", avail: four, readers: "3", rest: "0-2"},
		{spec: "auto", avail: []int{0, 1, 2, 3, 4, 5, 6, 7}, readers: "6-7", rest: "0-5"},
		{spec: "auto", avail: []int{5}},
		{spec: "1", avail: two, readers: "1", rest: "0"},
		{spec: "none", avail: four},
		{spec: "2-3", avail: four, readers: "2-3", rest: "0-1"},
		{spec: "0,2", avail: four, readers: "0,2", rest: "1,3"},
		{spec: "3,3,1", avail: four, readers: "1,3", rest: "0,2"},
		{spec: "0-1", avail: two, wantErrContains: "leave no CPU for the servers"},
		{spec: "7", avail: four, wantErrContains: "CPU 7 is not one this process may use (0-3)"},
		{spec: "x", avail: four, wantErrContains: `"x" is not a CPU number`},
		{spec: "3-1", avail: four, wantErrContains: "not a range"},
		{spec: "-1", avail: four, wantErrContains: "not a CPU number"},
		{spec: "0-99999", avail: four, wantErrContains: "too large"},
		{spec: "1", avail: nil, wantErrContains: "Linux only"},
	} {
		p, err := planFor(tc.spec, tc.avail)
		if tc.wantErrContains != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErrContains) {
				t.Errorf("%q: error %v, want one saying %q", tc.spec, err, tc.wantErrContains)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		if got := cpuList(p.readers); got != tc.readers {
			t.Errorf("%q over %v: readers %q, want %q", tc.spec, tc.avail, got, tc.readers)
		}
		if got := cpuList(p.rest); got != tc.rest {
			t.Errorf("%q over %v: rest %q, want %q", tc.spec, tc.avail, got, tc.rest)
		}
		if p.pinned() != (tc.readers != "") {
			t.Errorf("%q: pinned %v", tc.spec, p.pinned())
		}
	}
}

// Pinning moves every thread of the process, new ones follow, and
// restore puts them all back.
func TestPinProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU affinity is Linux's")
	}
	avail, err := availableCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(avail) < 2 {
		t.Skip("one CPU: nothing to split")
	}
	restore, err := pinProcess(avail[:1])
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []int)
	go func() {
		runtime.LockOSThread() // a thread of its own, maybe new
		defer runtime.UnlockOSThread()
		cpus, _ := availableCPUs()
		done <- cpus
	}()
	if got := <-done; !slices.Equal(got, avail[:1]) {
		t.Errorf("a thread after pinning runs on %v, want %v", got, avail[:1])
	}
	restore()
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpus, _ := availableCPUs()
		done <- cpus
	}()
	if got := <-done; !slices.Equal(got, avail) {
		t.Errorf("after restore a thread runs on %v, want %v", got, avail)
	}
}
