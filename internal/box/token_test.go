package box

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A token file is re-read once its reading is old, so a renewed token is
// used without a restart; while the file is unreadable the last token
// stays.
func TestTokenFileRenewal(t *testing.T) {
	old := tokenReread
	tokenReread = 10 * time.Millisecond
	t.Cleanup(func() { tokenReread = old })
	f := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(f, []byte("first\n"), 0o600)
	get := tokenFile(f, nil)
	if got := get(); got != "first" {
		t.Fatalf("token %q", got)
	}
	os.WriteFile(f, []byte("second"), 0o600)
	time.Sleep(20 * time.Millisecond)
	if got := get(); got != "second" {
		t.Errorf("renewed token not picked up: %q", got)
	}
	os.Remove(f)
	time.Sleep(20 * time.Millisecond)
	if got := get(); got != "second" {
		t.Errorf("after the file vanished: %q", got)
	}
}
