package outbound

import (
	"testing"
	"time"
)

func TestCurrentTokenAndWait(t *testing.T) {
	o := Options{Token: "fixed"}
	if got := o.CurrentToken(); got != "fixed" {
		t.Errorf("token %q, want fixed", got)
	}
	o.TokenFunc = func() string { return "renewed" }
	if got := o.CurrentToken(); got != "renewed" {
		t.Errorf("token %q, want the renewed one", got)
	}
	if o.Wait() != DefaultMaxWait {
		t.Errorf("wait %v, want the default", o.Wait())
	}
	o.MaxWait = time.Second
	if o.Wait() != time.Second {
		t.Errorf("wait %v, want 1s", o.Wait())
	}
}
