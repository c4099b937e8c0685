package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"

	"sitebox/internal/cache"
)

// ErrNoServer means no box answers on the admin socket.
var ErrNoServer = errors.New("no sitebox running")

// StatusError is an error answer from the admin API.
type StatusError struct {
	Status int    // HTTP status
	Msg    string // the server's message
}

func (e *StatusError) Error() string { return e.Msg }

// Unwrap returns the store sentinel matching the status, so callers can
// test errors.Is(err, store.ErrNotFound) as they would on the server.
func (e *StatusError) Unwrap() error { return storeCodes.ErrOf(e.Status) }

// Client talks to the admin socket of the box with a given state dir. It
// is safe for concurrent use.
type Client struct {
	stateDir, socket string
	hc               *http.Client
}

// NewClient returns a client for the box whose state dir is stateDir.
func NewClient(stateDir string) *Client {
	socket := SocketPath(stateDir)
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}
	return &Client{stateDir: stateDir, socket: socket, hc: &http.Client{Transport: tr}}
}

// Stats returns the cache's counters and gauges.
func (c *Client) Stats(ctx context.Context) (cache.Stats, error) {
	var s cache.Stats
	err := c.do(ctx, http.MethodGet, "/cache/stats", nil, &s)
	return s, err
}

// Entries lists every cached file at or below prefix ("" for all), one
// page after another.
func (c *Client) Entries(ctx context.Context, prefix string) ([]cache.EntryInfo, error) {
	var all []cache.EntryInfo
	for after := ""; ; {
		page, err := c.EntriesPage(ctx, prefix, after, cache.MaxListPage)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < cache.MaxListPage {
			return all, nil
		}
		after = page[len(page)-1].Path
	}
}

// EntriesPage lists up to limit cached files at or below prefix ("" for
// all) whose path sorts after `after` ("" for the first page). A page
// shorter than limit is the last.
func (c *Client) EntriesPage(ctx context.Context, prefix, after string, limit int) ([]cache.EntryInfo, error) {
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	if after != "" {
		q.Set("after", after)
	}
	var es []cache.EntryInfo
	err := c.do(ctx, http.MethodGet, "/cache/ls", q, &es)
	return es, err
}

// Evict drops the cached copy of path or of everything below it.
func (c *Client) Evict(ctx context.Context, path string) (EvictResult, error) {
	var r EvictResult
	err := c.do(ctx, http.MethodPost, "/cache/evict", url.Values{"path": {path}}, &r)
	return r, err
}

func (c *Client) do(ctx context.Context, method, path string, q url.Values, out any) error {
	// The host is ignored by DialContext; it only has to be valid.
	u := url.URL{Scheme: "http", Host: "sitebox", Path: path, RawQuery: q.Encode()}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.dialError(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("admin %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var eb errorBody
		if json.Unmarshal(body, &eb) != nil || eb.Error == "" {
			eb.Error = fmt.Sprintf("admin %s: %s", path, resp.Status)
		}
		return &StatusError{Status: resp.StatusCode, Msg: eb.Error}
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("admin %s: bad answer: %w", path, err)
	}
	return nil
}

// dialError turns the usual ways of finding no box into messages that say
// which state dir was tried.
func (c *Client) dialError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w with state dir %s (no admin socket at %s)", ErrNoServer, c.stateDir, c.socket)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w with state dir %s (admin socket %s refuses connections; left by a box that stopped?)", ErrNoServer, c.stateDir, c.socket)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("admin socket %s: permission denied; run as the user that runs sitebox serve", c.socket)
	}
	return fmt.Errorf("admin socket %s: %w", c.socket, err)
}
