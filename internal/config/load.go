package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"sitebox/internal/problem"
)

// Problem is one thing wrong with a config file.
type Problem = problem.Problem

// Problems is every problem found in one file; it is an error.
type Problems struct {
	File string
	List []Problem
}

func (ps *Problems) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problem(s)", ps.File, len(ps.List))
	for _, p := range ps.List {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// Load reads, decodes and validates a config file. Defaults are not applied.
// On failure the error is a *Problems listing everything found.
func Load(path string) (*Config, *Positions, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes and validates config text; name is used in messages.
func Parse(name string, data []byte) (*Config, *Positions, error) {
	probs := &Problems{File: name}
	pos, perr := positions(data)
	if perr != nil {
		probs.List = append(probs.List, *perr)
		return nil, nil, probs
	}
	var cfg Config
	typeChecked := false
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		var strict *toml.StrictMissingError
		var de *toml.DecodeError
		switch {
		case errors.As(err, &strict):
			for _, e := range strict.Errors {
				row, _ := e.Position()
				probs.List = append(probs.List, Problem{Line: row, Key: strings.Join(e.Key(), "."), Msg: "unknown setting"})
			}
			// The known settings decode all the same: check them too, so
			// one pass names every problem.
			if err := toml.Unmarshal(data, &cfg); err != nil {
				return nil, nil, probs
			}
		case errors.As(err, &de):
			// The decoder stops at the first value of the wrong type: find
			// them all, then check what remains without them.
			typeChecked = true
			tps, rest := typeCheck(data, pos)
			if len(tps) == 0 {
				row, _ := de.Position()
				probs.List = append(probs.List, Problem{Line: row, Key: strings.Join(de.Key(), "."), Msg: de.Error()})
				return nil, nil, probs
			}
			probs.List = append(probs.List, tps...)
			cfg = Config{}
			if rest == nil || toml.Unmarshal(rest, &cfg) != nil {
				return nil, nil, probs
			}
		default:
			probs.List = append(probs.List, Problem{Msg: err.Error()})
			return nil, nil, probs
		}
	}
	if !typeChecked && !recheckTypes(data, pos, probs, &cfg) {
		return nil, nil, probs
	}
	typed := probs.List
	for _, p := range cfg.Validate() {
		if coveredBy(p, typed) {
			continue // a value removed for its type: already named
		}
		if p.Line == 0 {
			p.Line = pos.Line(p.Key)
		}
		probs.List = append(probs.List, p)
	}
	if len(probs.List) > 0 {
		return &cfg, pos, probs
	}
	return &cfg, pos, nil
}

// recheckTypes runs the type check on a file that decoded: a number
// decodes into a duration as nanoseconds and into a watermark as an
// amount where the file meant "30s" or "90%", and a zero written for a
// size or duration reads as unset. It adds what it finds (bar the
// unknown settings, which the decoder has named) and decodes the file
// again without those values; false if that fails.
func recheckTypes(data []byte, pos *Positions, probs *Problems, cfg *Config) bool {
	tps, rest := typeCheck(data, pos)
	found := false
	for _, p := range tps {
		if p.Msg != "unknown setting" {
			probs.List = append(probs.List, p)
			found = true
		}
	}
	if !found {
		return true
	}
	*cfg = Config{}
	return rest != nil && toml.Unmarshal(rest, cfg) == nil
}

// coveredBy reports whether p is about a key a type problem already
// named (the key, something under it, or what holds it).
func coveredBy(p Problem, typed []Problem) bool {
	if p.Key == "" {
		return false
	}
	under := func(a, b string) bool {
		return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(a, b+"[")
	}
	for _, t := range typed {
		if t.Key != "" && (under(p.Key, t.Key) || under(t.Key, p.Key)) {
			return true
		}
	}
	return false
}

// typeCheck names every value of the wrong type and every unknown
// setting, and returns the file without them (nil if it cannot).
func typeCheck(data []byte, pos *Positions) ([]Problem, []byte) {
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		return nil, nil
	}
	ps := typeProblems(raw, pos)
	rest, err := toml.Marshal(raw)
	if err != nil {
		return ps, nil
	}
	return ps, rest
}

// Positions maps key paths ("root.addr", "export[2].pools") to the line
// where they are set, so semantic problems can be reported in place.
type Positions struct{ lines map[string]int }

// Line returns the line of key, of its closest enclosing table, or 0.
func (p *Positions) Line(key string) int {
	if p == nil {
		return 0
	}
	for key != "" {
		if l, ok := p.lines[key]; ok {
			return l
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

func positions(data []byte) (*Positions, *Problem) {
	pos := &Positions{lines: map[string]int{}}
	var p unstable.Parser
	p.Reset(data)
	counts := map[string]int{}
	table := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			name := joinKey(e.Key())
			if e.Kind == unstable.ArrayTable {
				counts[name]++
				name = fmt.Sprintf("%s[%d]", name, counts[name])
			}
			table = name
			pos.lines[table] = lineOf(&p, e)
		case unstable.KeyValue:
			k := joinKey(e.Key())
			if table != "" {
				k = table + "." + k
			}
			line := lineOf(&p, e.Value())
			if it := e.Key(); line == 0 && it.Next() { // an empty value: use the key's line
				line = lineOf(&p, it.Node())
			}
			pos.lines[k] = line
		}
	}
	if err := p.Error(); err != nil {
		var pe *unstable.ParserError
		line := 0
		if errors.As(err, &pe) {
			line = p.Shape(p.Range(pe.Highlight)).Start.Line
		}
		return nil, &Problem{Line: line, Msg: "syntax error: " + err.Error()}
	}
	return pos, nil
}

func joinKey(it unstable.Iterator) string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return strings.Join(parts, ".")
}

func lineOf(p *unstable.Parser, n *unstable.Node) int {
	if n == nil {
		return 0
	}
	if n.Raw.Length == 0 {
		if c := n.Child(); c != nil {
			return lineOf(p, c)
		}
		return 0
	}
	return p.Shape(n.Raw).Start.Line
}
