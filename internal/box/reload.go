package box

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"sitebox/internal/config"
)

// A reload (SIGHUP, `systemctl reload`) applies a new config to the
// running box without dropping a session. What can change live:
//
//	[server] log_level                  (the caller's logger; see serve)
//	[server] access_log, access_log_format
//	[[auth.issuer]]                     (a new token verifier; on a box
//	                                     that verified tokens already)
//	[[director.member]]
//	[cache] high_water, low_water, files_high_water, files_low_water
//
// Anything else — listeners, roles, exports, cache routes, the rest of
// [auth], [jobs] — needs a restart: the reload is refused, naming the
// keys, and the box keeps running on the config it has. A reload that
// succeeds also reads the X.509 CA directory, vomsdir and mapfiles
// again, as every [auth.x509] refresh does.
var liveKeys = []string{
	"server.log_level", "server.access_log", "server.access_log_format",
	"auth.issuer", "director.member",
	"cache.high_water", "cache.low_water", "cache.files_high_water", "cache.files_low_water",
}

// ErrNeedsRestart is returned by Reload when the new config changes
// something only a restart applies.
var ErrNeedsRestart = errors.New("needs a restart")

// Reload applies next (checked by the caller, defaults applied) to the
// running box: what can change live is changed, in an order that leaves
// the old settings in force if a step fails; a change that needs a
// restart refuses the whole reload (ErrNeedsRestart, naming the keys).
// It returns the keys it changed.
func (b *Box) Reload(next *config.Config) (changed []string, err error) {
	b.reloadMu.Lock()
	defer b.reloadMu.Unlock()
	cur := b.current
	diff, err := changedKeys(cur, next)
	if err != nil {
		return nil, err
	}
	var restart []string
	for _, k := range diff {
		if !isLive(k) {
			restart = append(restart, k)
		}
	}
	issuers := slices.ContainsFunc(diff, func(k string) bool { return strings.HasPrefix(k, "auth.issuer[") })
	if issuers && (b.tokens == nil || !next.Auth.Enabled()) {
		restart = append(restart, "auth.issuer (turning token verification on or off)")
	}
	if len(restart) > 0 {
		return nil, fmt.Errorf("%w: %s changed", ErrNeedsRestart, strings.Join(restart, ", "))
	}
	// Build what can fail first (undo releases it if a later step
	// fails), then swap.
	var swaps, undo []func()
	fail := func(err error) ([]string, error) {
		for _, u := range undo {
			u()
		}
		return nil, err
	}
	if cur.Server.AccessLog != next.Server.AccessLog || cur.Server.AccessLogFormat != next.Server.AccessLogFormat {
		l, err := b.openAccessLogAt(next.Server.AccessLog, next.Server.AccessLogFormat)
		if err != nil {
			return fail(err)
		}
		if l != nil {
			undo = append(undo, func() { l.Close() })
		}
		swaps = append(swaps, func() { b.access.swap(l) })
	}
	if issuers {
		v, err := b.newVerifier(&next.Auth)
		if err != nil {
			return fail(fmt.Errorf("auth: %w", err))
		}
		undo = append(undo, v.Close)
		swaps = append(swaps, func() { b.tokens.swap(v) })
	}
	if b.cache != nil && cur.Cache.Watermarks != next.Cache.Watermarks {
		swaps = append(swaps, func() { b.cache.SetWatermarks(next.Cache.Watermarks) })
	}
	if b.director != nil && slices.ContainsFunc(diff, func(k string) bool { return strings.HasPrefix(k, "director.member[") }) {
		dc, err := next.Director.Config(next.Server.Name, next.Server.Site, next.Server.StateDir)
		if err != nil {
			return fail(err)
		}
		swaps = append(swaps, func() { b.director.SetMembers(dc.Members) })
	}
	for _, s := range swaps {
		s()
	}
	b.reloadX509() // CRLs, CAs and mapfiles change on disk, not in the config
	b.current = next
	b.setDigest(next)
	return diff, nil
}

func isLive(key string) bool {
	for _, l := range liveKeys {
		if key == l || strings.HasPrefix(key, l+"[") || strings.HasPrefix(key, l+".") {
			return true
		}
	}
	return false
}

// changedKeys names the keys whose values differ between two configs,
// as written in the file ("root.addr", "auth.issuer[2].url").
func changedKeys(a, b *config.Config) ([]string, error) {
	fa, err := flatKeys(a)
	if err != nil {
		return nil, err
	}
	fb, err := flatKeys(b)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for k, v := range fa {
		if w, ok := fb[k]; !ok {
			seen[wholeEntry(k, fb)] = true
		} else if !reflect.DeepEqual(v, w) {
			seen[k] = true
		}
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			seen[wholeEntry(k, fa)] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// wholeEntry names a key missing from other by its table entry
// ("auth.issuer[2]") when the whole entry is missing there.
func wholeEntry(key string, other map[string]any) string {
	i := strings.LastIndex(key, "]")
	if i < 0 {
		return key
	}
	entry := key[:i+1]
	for k := range other {
		if strings.HasPrefix(k, entry+".") {
			return key
		}
	}
	return entry
}

// flatKeys is the config as TOML keys and their values.
func flatKeys(c *config.Config) (map[string]any, error) {
	data, err := toml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	}
	var tree map[string]any
	if err := toml.Unmarshal(data, &tree); err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	}
	out := map[string]any{}
	flatten("", tree, out)
	return out, nil
}

func flatten(prefix string, v any, out map[string]any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flatten(key, x, out)
		}
	case []any:
		tables := len(t) > 0
		for _, x := range t {
			if _, ok := x.(map[string]any); !ok {
				tables = false
			}
		}
		if !tables {
			out[prefix] = t
			return
		}
		for i, x := range t {
			flatten(fmt.Sprintf("%s[%d]", prefix, i+1), x, out)
		}
	default:
		out[prefix] = t
	}
}
