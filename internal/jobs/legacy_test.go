package jobs

import (
	"testing"
	"time"
)

// Records from before jobs kept their issuer: a local user's go to the
// site issuer's user of that subject, a grid user's to no one.
func TestLegacyRecordsOwner(t *testing.T) {
	e := newSvc(t, func(c *svcConfig) { c.LegacyIssuer = testIssuer })
	now := time.Now()
	old := []*Job{
		{ID: "1.0", Owner: "alice", State: Completed, Submitted: now, Finished: now},
		{ID: "2.0", Owner: "alice", Grid: true, State: Completed, Submitted: now, Finished: now},
	}
	e.stop()
	d, err := openDB(e.cfg.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.save(old...); err != nil {
		t.Fatal(err)
	}
	d.close()
	e.start()
	if j, _ := e.s.Get("1.0"); j.Principal() != as("alice") {
		t.Errorf("old local record: owner %v", j.Principal())
	}
	if j, _ := e.s.Get("2.0"); j.Issuer != unknownIssuer {
		t.Errorf("old grid record: owner %v", j.Principal())
	}
}
