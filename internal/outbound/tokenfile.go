package outbound

import (
	"errors"
	"log/slog"
	"sync"
	"time"
)

// ReadToken reads the bearer token in file (WLCG's BEARER_TOKEN_FILE
// format: the token, white space around it ignored), a file the
// operator or the user named, so not checked for its owner (see
// ReadTokenFile). An empty file is an error naming it; so is a missing
// name.
func ReadToken(file string) (string, error) {
	if file == "" {
		return "", errors.New("no token file configured")
	}
	return ReadTokenFile(file, -1)
}

// DefaultTokenReread is how long a token read from a TokenFile is used
// before the file is read again.
const DefaultTokenReread = time.Minute

// TokenFile is a token file a long-lived client presents from (the
// cache's upstream_token_file, staging's stage_token_file, a partner
// domain's token_file), read again at most every Reread so a token
// renewed in place (htgettoken, oidc-agent, a cron job) is used without a
// restart. While the file cannot be read the last good token stays in
// use. Safe for concurrent use.
type TokenFile struct {
	path   string
	reread time.Duration
	log    *slog.Logger

	mu   sync.Mutex
	tok  string
	read time.Time
}

// NewTokenFile returns the token file at path; nothing is read until the
// first use. reread zero means DefaultTokenReread; log (nil: none) hears
// of a renewal that cannot be read.
func NewTokenFile(path string, reread time.Duration, log *slog.Logger) *TokenFile {
	if reread <= 0 {
		reread = DefaultTokenReread
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &TokenFile{path: path, reread: reread, log: log}
}

// LoadTokenFile is NewTokenFile that reads the file at once, so that a
// box configured with an unreadable or empty one does not start.
func LoadTokenFile(path string, log *slog.Logger) (*TokenFile, error) {
	t, err := ReadToken(path)
	if err != nil {
		return nil, err
	}
	f := NewTokenFile(path, 0, log)
	f.tok, f.read = t, time.Now()
	return f, nil
}

// Get is the token to present: the last one read while it is younger
// than the re-read interval, else the file's content now. A file that
// cannot be read leaves the last good token in use (logged); with none
// yet, the read error is the answer.
func (f *TokenFile) Get() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tok != "" && time.Since(f.read) < f.reread {
		return f.tok, nil
	}
	f.read = time.Now()
	t, err := ReadToken(f.path)
	if err != nil {
		f.log.Warn("cannot read the token file; keeping the last token", "file", f.path, "err", err)
		if f.tok == "" {
			return "", err
		}
		return f.tok, nil
	}
	f.tok = t
	return t, nil
}

// Token is Get without the error (an unreadable file with no good token
// before gives ""), for Options.TokenFunc.
func (f *TokenFile) Token() string {
	t, _ := f.Get()
	return t
}
