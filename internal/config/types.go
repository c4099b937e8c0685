package config

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"

	"sitebox/internal/units"
)

// typeProblems walks the decoded TOML beside the Config type and names
// every value of the wrong type (and, on the way, every unknown setting),
// so a file with several mistakes gets them all in one run, in plain
// words, where the TOML decoder stops at the first. It removes the bad
// values from raw so what remains can be decoded and checked as well.
func typeProblems(raw map[string]any, pos *Positions) []Problem {
	var ps []Problem
	walkTable(reflect.TypeOf(Config{}), raw, "", pos, &ps)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
	return ps
}

// tomlFields maps a struct's TOML keys to its fields, embedded structs
// flattened, as the decoder sees them.
func tomlFields(t reflect.Type, into map[string]reflect.StructField) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			tomlFields(f.Type, into)
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		into[tag] = f
	}
}

func walkTable(t reflect.Type, table map[string]any, prefix string, pos *Positions, ps *[]Problem) {
	fields := map[string]reflect.StructField{}
	tomlFields(t, fields)
	for k, v := range table {
		key := prefix + k
		f, ok := fields[k]
		if !ok {
			for name, field := range fields { // the decoder's case-insensitive match
				if strings.EqualFold(name, k) {
					f, ok = field, true
				}
			}
		}
		if !ok {
			*ps = append(*ps, Problem{Line: pos.Line(key), Key: key, Msg: "unknown setting"})
			delete(table, k)
			continue
		}
		if !walkValue(f.Type, v, key, pos, ps) || !nonZero(f, v, key, pos, ps) {
			delete(table, k)
		}
	}
}

// nonZero checks a setting tagged nonzero (a size or duration whose
// zero value means "unset, take the default"): written as 0 in the file,
// it would silently become the default, so it is named instead. The
// tag's value, when given, says what the setting takes ("duration of at
// least 1s"), so the message names the range Validate holds the setting
// to rather than only "positive".
func nonZero(f reflect.StructField, v any, key string, pos *Positions, ps *[]Problem) bool {
	if _, tagged := f.Tag.Lookup("nonzero"); !tagged {
		return true
	}
	t := f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	zero := false
	switch x := v.(type) {
	case int64:
		zero = x == 0
	case string:
		p := reflect.New(t)
		if u, ok := p.Interface().(encoding.TextUnmarshaler); ok && u.UnmarshalText([]byte(x)) == nil {
			zero = p.Elem().IsZero()
		}
	}
	if !zero {
		return true
	}
	want := f.Tag.Get("nonzero")
	if want == "" {
		want = "positive value"
		switch t {
		case reflect.TypeOf(units.Size(0)), reflect.TypeOf(BufferMemory(0)):
			want = "positive size"
		case reflect.TypeOf(units.Duration(0)):
			want = "positive duration"
		}
	}
	written := fmt.Sprint(v)
	if x, ok := v.(string); ok {
		written = strconv.Quote(x)
	}
	*ps = append(*ps, Problem{Line: pos.Line(key), Key: key, Msg: fmt.Sprintf("%s is not a %s (leave the setting out for its default)", written, want)})
	return false
}

// walkValue reports whether v may be decoded into t, adding a problem
// when not; within arrays and tables it removes only the bad parts.
func walkValue(t reflect.Type, v any, key string, pos *Positions, ps *[]Problem) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	bad := func() bool {
		*ps = append(*ps, Problem{Line: pos.Line(key), Key: key, Msg: fmt.Sprintf("want %s, found %s", describeType(t), describeValue(v))})
		return false
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return walkText(t, v, key, pos, ps, bad)
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.String:
		if _, ok := v.(string); !ok {
			return bad()
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if t == reflect.TypeOf(time.Duration(0)) {
			if _, ok := v.(string); ok {
				return true
			}
		}
		if _, ok := v.(int64); !ok {
			return bad()
		}
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case float64, int64:
		default:
			return bad()
		}
	case reflect.Struct:
		if t == reflect.TypeOf(time.Time{}) {
			return true
		}
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		walkTable(t, m, key+".", pos, ps)
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		for k, e := range m {
			if !walkValue(t.Elem(), e, key+"."+k, pos, ps) {
				delete(m, k)
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			if ms, ok2 := v.([]map[string]any); ok2 { // an array of tables
				for i, m := range ms {
					walkValue(t.Elem(), m, fmt.Sprintf("%s[%d]", key, i+1), pos, ps)
				}
				return true
			}
			return bad()
		}
		good := true
		for i, e := range arr {
			if !walkValue(t.Elem(), e, fmt.Sprintf("%s[%d]", key, i+1), pos, ps) {
				good = false
			}
		}
		return good
	}
	return true
}

var textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()

// walkText checks a value for a type that reads its own text (a size,
// a duration): the problem is the type's own words, e.g. "\"lots\" is
// not a size (examples: …)". A whole number is taken where the type is
// one (a size in bytes).
func walkText(t reflect.Type, v any, key string, pos *Positions, ps *[]Problem, bad func() bool) bool {
	switch x := v.(type) {
	case string:
		if err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(x)); err != nil {
			*ps = append(*ps, Problem{Line: pos.Line(key), Key: key, Msg: err.Error()})
			return false
		}
		return true
	case int64:
		if t == reflect.TypeOf(units.Size(0)) {
			return true
		}
	}
	return bad()
}

// describeType says in plain words what a setting takes.
func describeType(t reflect.Type) string {
	switch t {
	case reflect.TypeOf(units.Size(0)):
		return "a size (e.g. \"1GiB\" or a number of bytes)"
	case reflect.TypeOf(units.Duration(0)):
		return "a duration in quotes (e.g. \"30s\")"
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "text in quotes"
	}
	switch t.Kind() {
	case reflect.String:
		return "text in quotes"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "a table"
	case reflect.Slice, reflect.Array:
		return "a list [ … ] of " + plural(describeType(t.Elem()))
	}
	return t.String()
}

func plural(s string) string {
	switch s {
	case "text in quotes":
		return "texts in quotes"
	case "a whole number":
		return "whole numbers"
	case "a number":
		return "numbers"
	case "a table":
		return "tables"
	}
	return s
}

// describeValue says what the file holds.
func describeValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the text %q", x)
	case bool:
		return fmt.Sprintf("%v", x)
	case int64:
		return fmt.Sprintf("the number %d", x)
	case float64:
		return fmt.Sprintf("the number %v", x)
	case map[string]any:
		return "a table"
	case []any, []map[string]any:
		return "a list"
	}
	b, _ := toml.Marshal(map[string]any{"v": v})
	return strings.TrimSpace(strings.TrimPrefix(string(b), "v = "))
}
