package spec

import (
	"fmt"
	"strings"
)

// splitCondorArgs splits HTCondor arguments. New syntax (the whole value
// in double quotes): blanks separate, single quotes group, and a quote
// written twice stands for itself. Old syntax: blanks separate, \" is a quote.
func splitCondorArgs(v string) ([]string, string) {
	if !strings.HasPrefix(v, `"`) {
		// HTCondor refuses a bare double quote in the old syntax.
		if strings.Contains(strings.ReplaceAll(v, `\"`, ""), `"`) {
			return nil, `a double quote in old-syntax arguments must be written \" (or put the whole value in double quotes, the new syntax)`
		}
		return strings.Fields(strings.ReplaceAll(v, `\"`, `"`)), ""
	}
	inner, msg := condorUnquote(v)
	if msg != "" {
		return nil, msg
	}
	var args []string
	var cur strings.Builder
	inArg, inSingle := false, false
	for i := 0; i < len(inner); i++ {
		switch c := inner[i]; {
		case inSingle && c == '\'' && i+1 < len(inner) && inner[i+1] == '\'':
			cur.WriteByte('\'')
			i++
		case c == '\'':
			inSingle, inArg = !inSingle, true
		case !inSingle && (c == ' ' || c == '\t'):
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inSingle {
		return nil, "unterminated single quote"
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, ""
}

// condorUnquote strips the double quotes of a new-syntax value, where ""
// stands for one double quote.
func condorUnquote(v string) (string, string) {
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch {
		case v[i] != '"':
			b.WriteByte(v[i])
		case i+1 < len(v) && v[i+1] == '"':
			b.WriteByte('"')
			i++
		case strings.TrimSpace(v[i+1:]) != "":
			return "", fmt.Sprintf(`unexpected %q after the closing double quote (write "" for a quote inside)`, clipText(strings.TrimSpace(v[i+1:])))
		default:
			return b.String(), ""
		}
	}
	return "", "unterminated double quote"
}

// parseCondorEnv reads HTCondor's environment: new syntax
// "A=1 B='x y'" (quoted as arguments are) or old syntax A=1;B=2.
func parseCondorEnv(v string) (map[string]string, []string) {
	var entries []string
	if strings.HasPrefix(v, `"`) {
		toks, msg := splitCondorArgs(v)
		if msg != "" {
			return nil, []string{msg}
		}
		entries = toks
	} else {
		entries = splitList(v, ";")
	}
	env := map[string]string{}
	var msgs []string
	for _, e := range entries {
		name, val, ok := strings.Cut(e, "=")
		if !ok {
			msgs = append(msgs, fmt.Sprintf("environment entry %q has no '=' (write NAME=value)", e))
			continue
		}
		if msg := checkEnvName(name, env); msg != "" {
			msgs = append(msgs, msg)
			continue
		}
		env[name] = val
	}
	return env, msgs
}

// classAdString reads a ClassAd string literal ("...", \" escapes), the
// form +Attr values take.
func classAdString(v string) (string, string) {
	if !strings.HasPrefix(v, `"`) {
		return "", fmt.Sprintf(`must be a quoted string like "local,site", not %s`, clipText(v))
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		case c != '"':
			b.WriteByte(c)
		case strings.TrimSpace(v[i+1:]) != "":
			return "", fmt.Sprintf("unexpected %q after the closing double quote", clipText(strings.TrimSpace(v[i+1:])))
		default:
			return b.String(), ""
		}
	}
	return "", "unterminated double quote"
}

func splitCommaList(s string) []string { return splitList(s, ",") }

// splitList splits on sep, trims, and drops empty items (a trailing
// separator is common and harmless).
func splitList(s, sep string) []string {
	var out []string
	for _, item := range strings.Split(s, sep) {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// clipText shortens s for quoting in a message.
func clipText(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
