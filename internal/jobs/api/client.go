package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Client calls a box's job API (Prefix) with a bearer token: the CLI
// with its user's token, BoxBackend with this box's token at a partner.
type Client struct {
	URL   string       // the box's https://host:port
	HTTP  *http.Client // with the box's CA
	Token func() (string, error)
}

// StatusError is a request the API answered with an error status.
type StatusError struct {
	Method, Path string
	Status       string // e.g. "404 Not Found"
	Code         int
	// Msg is the API's error message (FromAPI), else the start of the
	// body.
	Msg     string
	FromAPI bool
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: %s: %s", e.Method, e.Path, e.Status, e.Msg)
}

// Do sends one request with body (nil, or a value sent as JSON); out
// (nil, a pointer decoded from JSON, or an io.Writer) gets the answer.
// An error status is a *StatusError.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.URL, "/")+path, rd)
	if err != nil {
		return err
	}
	tok, err := c.Token()
	if err != nil {
		return fmt.Errorf("token for %s: %w", c.URL, err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		se := &StatusError{Method: method, Path: path, Status: resp.Status, Code: resp.StatusCode}
		var e apiError
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(msg, &e) == nil && e.Error != "" {
			se.Msg, se.FromAPI = e.Error, true
		} else {
			se.Msg = strings.TrimSpace(string(msg))
		}
		return se
	}
	if out == nil {
		return nil
	}
	if w, ok := out.(io.Writer); ok {
		_, err = io.Copy(w, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return err
	}
	// Read to the end (the encoder's newline), so the connection is reused.
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	return err
}
