package outbound

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The WLCG order: BEARER_TOKEN, BEARER_TOKEN_FILE, then
// $XDG_RUNTIME_DIR/bt_u<uid> and /tmp/bt_u<uid>.
func TestFindUserTokenOrder(t *testing.T) {
	dir := t.TempDir()
	uid := os.Getuid()
	named := filepath.Join(dir, "named")
	os.WriteFile(named, []byte(" from-file \n"), 0o600)
	runtime := filepath.Join(dir, "run")
	os.Mkdir(runtime, 0o700)
	os.WriteFile(filepath.Join(runtime, "bt_u"+strconv.Itoa(uid)), []byte("from-runtime\n"), 0o600)

	for _, tc := range []struct {
		env       map[string]string
		tok, from string
	}{
		{map[string]string{"BEARER_TOKEN": "direct", "BEARER_TOKEN_FILE": named}, "direct", "BEARER_TOKEN"},
		{map[string]string{"BEARER_TOKEN_FILE": named, "XDG_RUNTIME_DIR": runtime}, "from-file", named},
		{map[string]string{"XDG_RUNTIME_DIR": runtime}, "from-runtime", filepath.Join(runtime, "bt_u"+strconv.Itoa(uid))},
	} {
		tok, from, err := FindUserToken(envOf(tc.env), uid)
		if err != nil || tok != tc.tok || from != tc.from {
			t.Errorf("%v: %q from %q, %v; want %q from %q", tc.env, tok, from, err, tc.tok, tc.from)
		}
	}
	if _, _, err := FindUserToken(envOf(map[string]string{"BEARER_TOKEN_FILE": filepath.Join(dir, "missing")}), uid); err == nil {
		t.Error("a missing BEARER_TOKEN_FILE was accepted")
	}
}

// A credential found by its default name is used only when it belongs to
// the user, is a regular file and nobody else may write it.
func TestOwnedFileRefuses(t *testing.T) {
	dir := t.TempDir()
	uid := os.Getuid()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("tok"), 0o600)
	if err := OwnedFile(good, uid); err != nil {
		t.Fatalf("the user's own 0600 file: %v", err)
	}
	groupW := filepath.Join(dir, "groupw")
	os.WriteFile(groupW, []byte("tok"), 0o600)
	os.Chmod(groupW, 0o620)
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	fifo := filepath.Join(dir, "dir")
	os.Mkdir(fifo, 0o700)
	for name, c := range map[string]struct {
		file string
		uid  int
		want string
	}{
		"someone else's": {good, uid + 1, "does not belong"},
		"group-writable": {groupW, uid, "writable by others"},
		"a link":         {link, uid, "symbolic link"},
		"a directory":    {fifo, uid, "not a regular file"},
	} {
		err := OwnedFile(c.file, c.uid)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want it to say %q", name, err, c.want)
		}
	}
	if err := OwnedFile(filepath.Join(dir, "none"), uid); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v, want not-exist", err)
	}
	// A planted token file is an error, not a silent fallback to none.
	runtime := filepath.Join(dir, "run")
	os.Mkdir(runtime, 0o700)
	os.WriteFile(filepath.Join(runtime, "bt_u"+strconv.Itoa(uid+1)), []byte("planted"), 0o600)
	if _, _, err := FindUserToken(envOf(map[string]string{"XDG_RUNTIME_DIR": runtime}), uid+1); err == nil {
		t.Error("a token file owned by someone else was used")
	}
}

func TestReadTokenFileLimits(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte(" \n"), 0o600)
	if _, err := ReadTokenFile(empty, -1); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty token file: %v", err)
	}
	huge := filepath.Join(dir, "huge")
	os.WriteFile(huge, make([]byte, maxTokenFile+1), 0o600)
	if _, err := ReadTokenFile(huge, -1); err == nil || !strings.Contains(err.Error(), "larger") {
		t.Errorf("huge token file: %v", err)
	}
}
