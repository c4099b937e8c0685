package outbound

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Where a user's credentials are found, as the WLCG bearer token
// discovery and the grid's X.509 clients look for them. Each function
// takes the environment to read (os.Getenv for the user running the
// command; for another user, whose environment a mount serving many
// users cannot see, OtherUserEnv) and the user's uid.

// maxTokenFile bounds a token file's size: tokens are a few KiB, and a
// file the user did not mean as one must not be read whole.
const maxTokenFile = 64 << 10

// OtherUserEnv is the environment assumed for a user whose own one is
// not visible: only XDG_RUNTIME_DIR, at its systemd place.
func OtherUserEnv(uid int) func(string) string {
	return func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return fmt.Sprintf("/run/user/%d", uid)
		}
		return ""
	}
}

// UserTokenFiles are the files WLCG bearer token discovery reads after
// $BEARER_TOKEN and $BEARER_TOKEN_FILE: $XDG_RUNTIME_DIR/bt_u<uid>, then
// /tmp/bt_u<uid>.
func UserTokenFiles(getenv func(string) string, uid int) []string {
	var out []string
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		out = append(out, filepath.Join(d, fmt.Sprintf("bt_u%d", uid)))
	}
	return append(out, fmt.Sprintf("/tmp/bt_u%d", uid))
}

// FindUserToken is WLCG bearer token discovery for user uid: the
// token itself in $BEARER_TOKEN, the file $BEARER_TOKEN_FILE names,
// else the first of UserTokenFiles that exists. The files found by
// their default names must belong to uid and be writable by nobody
// else (OwnedFile): in /tmp anyone may create a file of that name, and
// a token planted there would make the user act as someone else. from
// names where the token came from ("" when none was found, which is
// not an error).
func FindUserToken(getenv func(string) string, uid int) (tok, from string, err error) {
	if t := strings.TrimSpace(getenv("BEARER_TOKEN")); t != "" {
		return t, "BEARER_TOKEN", nil
	}
	if name := getenv("BEARER_TOKEN_FILE"); name != "" {
		t, err := ReadTokenFile(name, -1)
		if err != nil {
			return "", "", fmt.Errorf("BEARER_TOKEN_FILE: %w", err)
		}
		return t, name, nil
	}
	for _, name := range UserTokenFiles(getenv, uid) {
		t, err := ReadTokenFile(name, uid)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", "", err
		}
		return t, name, nil
	}
	return "", "", nil
}

// ReadTokenFile reads a bearer token from name, trimmed of white space.
// With uid ≥ 0 the file must pass OwnedFile's checks for uid first.
func ReadTokenFile(name string, uid int) (string, error) {
	f, err := openOwned(name, uid)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxTokenFile {
		return "", fmt.Errorf("%s is larger than %d bytes: not a token", name, maxTokenFile)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("token file %s is empty", name)
	}
	return t, nil
}

// OwnedFile checks that name is a regular file (not a link) owned by
// uid that neither its group nor others may write: the checks a
// credential found by a default name must pass before it is used for
// uid. The error names the file and what is wrong with it; a missing
// file is os.ErrNotExist.
func OwnedFile(name string, uid int) error {
	f, err := openOwned(name, uid)
	if err != nil {
		return err
	}
	return f.Close()
}

// openOwned opens name without following a link (a link in /tmp could
// point at any file) and, with uid ≥ 0, checks the open file itself, so
// the file checked is the file read.
func openOwned(name string, uid int) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK // a FIFO must not hang the reader
	if uid >= 0 {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(name, flags, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symbolic link: not used as a credential", name)
		}
		return nil, err
	}
	if uid < 0 {
		return f, nil
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		err = fmt.Errorf("%s is not a regular file: not used as a credential", name)
	case st == nil || int(st.Uid) != uid:
		err = fmt.Errorf("%s does not belong to uid %d: not used as its credential", name, uid)
	case fi.Mode().Perm()&0o022 != 0:
		err = fmt.Errorf("%s is writable by others (mode %v): not used as a credential", name, fi.Mode().Perm())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// UserProxyPath is where the grid's X.509 clients keep uid's proxy when
// no $X509_USER_PROXY says otherwise.
func UserProxyPath(uid int) string { return fmt.Sprintf("/tmp/x509up_u%d", uid) }

// UserProxyFile is the X.509 proxy of the user running a command, where
// the grid's clients look for it: $X509_USER_PROXY, else
// /tmp/x509up_u<uid>. ok is false when neither is there (the command
// then presents none); a file X509_USER_PROXY names must exist.
func UserProxyFile(getenv func(string) string, uid int) (file string, ok bool, err error) {
	if f := getenv("X509_USER_PROXY"); f != "" {
		if _, err := os.Stat(f); err != nil {
			return "", false, fmt.Errorf("X509_USER_PROXY: %w", err)
		}
		return f, true, nil
	}
	f := UserProxyPath(uid)
	if _, err := os.Stat(f); err != nil {
		return "", false, nil
	}
	return f, true, nil
}

// maxCCache bounds a credential cache's size: a TGT and some service
// tickets take a few KiB, and a file that is not one must not be read
// whole.
const maxCCache = 1 << 20

// UserCCachePath is where MIT Kerberos keeps uid's credential cache when
// no $KRB5CCNAME says otherwise.
func UserCCachePath(uid int) string { return fmt.Sprintf("/tmp/krb5cc_%d", uid) }

// UserCCache is the Kerberos credential cache of user uid, where the
// Kerberos library looks for it: $KRB5CCNAME (a FILE: cache, or a plain
// path), else /tmp/krb5cc_<uid>. ok is false when there is none (the
// user has not run kinit); a KRB5CCNAME of another type (KEYRING:, KCM:,
// DIR:) is an error, since only files are read. Whether the file may be
// used (OwnedSecretFile) is checked when it is read.
func UserCCache(getenv func(string) string, uid int) (file string, ok bool, err error) {
	if name := getenv("KRB5CCNAME"); name != "" {
		f, isFile := strings.CutPrefix(name, "FILE:")
		if !isFile && strings.Contains(name, ":") && !strings.HasPrefix(name, "/") {
			typ, _, _ := strings.Cut(name, ":")
			return "", false, fmt.Errorf("KRB5CCNAME=%s: a %s: credential cache cannot be read, only FILE: ones (kinit -c FILE:%s)", name, typ, UserCCachePath(uid))
		}
		if _, err := os.Lstat(f); err != nil {
			return "", false, nil
		}
		return f, true, nil
	}
	f := UserCCachePath(uid)
	if _, err := os.Lstat(f); err != nil {
		return "", false, nil
	}
	return f, true, nil
}

// OwnedSecretFile is OwnedFile for a credential whose content is the
// secret itself (a Kerberos credential cache holds session keys): it
// must also be unreadable by the group and others.
func OwnedSecretFile(name string, uid int) error {
	f, err := openSecret(name, uid)
	if err != nil {
		return err
	}
	return f.Close()
}

// openSecret is openOwned with the check that nobody but the owner may
// read the file.
func openSecret(name string, uid int) (*os.File, error) {
	f, err := openOwned(name, uid)
	if err != nil || uid < 0 {
		return f, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().Perm()&0o044 != 0 {
		err = fmt.Errorf("%s is readable by others (mode %v): not used as a credential", name, fi.Mode().Perm())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
