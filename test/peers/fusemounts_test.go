package peers

import "testing"

// Mount points in /proc/self/mountinfo escape spaces and backslashes.
func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{`/tmp/a`: "/tmp/a", `/tmp/a\040b`: "/tmp/a b", `/x\134y`: `/x\y`} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}
