package upstream

import "testing"

// A fetch goes where the file is open, unless that stream is busier by
// more than the price of an open; a stream not connected is priced at
// three opens.
func TestTakePricesOpensAndDials(t *testing.T) {
	u := &Server{busy: make([]int, 3)}
	ready, none, cold := 0, 1, 2
	cost := func(si int) int {
		switch si {
		case ready:
			return 0
		case none:
			return GroupSlack
		}
		return 3 * GroupSlack
	}
	got := make([]int, 0, 16)
	for range 16 {
		got = append(got, u.take(cost))
	}
	// The ready stream takes fetches until it is GroupSlack busier than
	// the one needing an open, then they share; the one that must dial
	// is never worth it within 16.
	for i, si := range got[:GroupSlack+1] {
		if si != ready {
			t.Fatalf("fetch %d went to stream %d (order %v), want the ready one", i, si, got)
		}
	}
	if d := u.busy[ready] - u.busy[none]; d != GroupSlack && d != GroupSlack+1 || u.busy[cold] != 0 {
		t.Errorf("busy %v after %v", u.busy, got)
	}
}

// The retries after a dropped connection, all at once, spread over the
// least busy streams rather than queue on the first to reopen the file.
func TestRetriesTakeTheLeastBusyStreams(t *testing.T) {
	u := &Server{busy: make([]int, 4)}
	var h *File // a retry's price needs nothing of the file
	got := map[int]int{}
	for range 8 {
		got[u.take(h.pick(0, u, GroupSlack, true))]++
	}
	for si := range 4 {
		if got[si] != 2 {
			t.Fatalf("8 retries over 4 idle streams went %v, want 2 each", got)
		}
	}
}
