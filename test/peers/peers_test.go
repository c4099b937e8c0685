package peers

import "testing"

// FreePort never returns a port twice in one process, though each is
// closed again at once (a random draw from 22,000 ports repeats within a
// few hundred calls).
func TestFreePortNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 1000 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
}
