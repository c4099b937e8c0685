package outbound

import (
	"os"
	"path/filepath"
	"strings"
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

// A token file is re-read once its reading is old, so a renewed token is
// used without a restart; while the file is unreadable the last token
// stays.
func TestTokenFileRenewal(t *testing.T) {
	f := filepath.Join(t.TempDir(), "tok")
	tf := NewTokenFile(f, time.Nanosecond, nil) // every use reads again
	os.WriteFile(f, []byte("first\n"), 0o600)
	if got := tf.Token(); got != "first" {
		t.Fatalf("token %q", got)
	}
	os.WriteFile(f, []byte("second"), 0o600)
	if got := tf.Token(); got != "second" {
		t.Errorf("renewed token not picked up: %q", got)
	}
	os.Remove(f)
	if got, err := tf.Get(); got != "second" || err != nil {
		t.Errorf("after the file vanished: %q, %v", got, err)
	}
	// Within the re-read interval the file is not read again.
	os.WriteFile(f, []byte("third"), 0o600)
	slow := NewTokenFile(f, time.Hour, nil)
	slow.Token()
	os.WriteFile(f, []byte("fourth"), 0o600)
	if got := slow.Token(); got != "third" {
		t.Errorf("read again within the interval: %q", got)
	}
}

// Until a token has been read, the read error is the answer; a box does
// not start with a token file it cannot use.
func TestTokenFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none")
	if _, err := NewTokenFile(missing, 0, nil).Get(); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := LoadTokenFile(missing, nil); !os.IsNotExist(err) {
		t.Errorf("load of a missing file: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte(" \n"), 0o600)
	if _, err := ReadToken(empty); err == nil || !strings.Contains(err.Error(), "token file "+empty+" is empty") {
		t.Errorf("empty file: %v", err)
	}
	if _, err := ReadToken(""); err == nil || !strings.Contains(err.Error(), "no token file configured") {
		t.Errorf("no file: %v", err)
	}
}
