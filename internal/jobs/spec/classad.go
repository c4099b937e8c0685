package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// A small ClassAd expression language for Requirements and Rank: the
// operators HTCondor users write (|| && ! == != =?= =!= < <= > >= + - * /,
// parentheses) over literals and the attributes a domain advertises.
// An attribute the box's domains do not advertise is refused when the
// file is read, because HTCondor would match it against machine ads the
// box does not have — silently never (or always) true.

// domainAttrs are the machine attributes a domain advertises, as
// HTCondor spells them.
var domainAttrs = []string{"OpSys", "Arch", "Cpus", "Memory", "HasSingularity"}

// jobAttrs are the job's own attributes an expression may use (MY.).
var jobAttrs = []string{"RequestCpus", "RequestMemory", "RequestDisk"}

// adValue is a ClassAd value: undefined, a boolean, a number or a string.
type adValue struct {
	kind byte // 'u' undefined, 'b', 'n', 's'
	b    bool
	n    float64
	s    string
}

var undefined = adValue{kind: 'u'}

// adExpr is a parsed expression.
type adExpr interface {
	eval(attr func(name string) adValue) adValue
}

type adLit adValue
type adAttr string
type adNot struct{ x adExpr }
type adBin struct {
	op   string
	l, r adExpr
}

func (l adLit) eval(func(string) adValue) adValue    { return adValue(l) }
func (a adAttr) eval(f func(string) adValue) adValue { return f(string(a)) }
func (n adNot) eval(f func(string) adValue) adValue {
	v := n.x.eval(f)
	if v.kind != 'b' {
		return undefined
	}
	return adValue{kind: 'b', b: !v.b}
}

func (e adBin) eval(f func(string) adValue) adValue {
	l := e.l.eval(f)
	switch e.op {
	case "&&", "||":
		r := e.r.eval(f)
		want := e.op == "||" // the value that decides alone
		if l.kind == 'b' && l.b == want || r.kind == 'b' && r.b == want {
			return adValue{kind: 'b', b: want}
		}
		if l.kind == 'b' && r.kind == 'b' {
			return adValue{kind: 'b', b: !want}
		}
		return undefined
	case "=?=", "=!=":
		r := e.r.eval(f)
		same := l.kind == r.kind && l.b == r.b && l.n == r.n && l.s == r.s
		return adValue{kind: 'b', b: same == (e.op == "=?=")}
	}
	r := e.r.eval(f)
	if l.kind == 'b' {
		l = adValue{kind: 'n', n: boolNum(l.b)}
	}
	if r.kind == 'b' {
		r = adValue{kind: 'n', n: boolNum(r.b)}
	}
	if l.kind == 'u' || r.kind == 'u' || l.kind != r.kind {
		return undefined
	}
	if l.kind == 's' {
		c := strings.Compare(strings.ToLower(l.s), strings.ToLower(r.s)) // == on strings ignores case
		return compare(e.op, float64(c), 0)
	}
	switch e.op {
	case "+":
		return adValue{kind: 'n', n: l.n + r.n}
	case "-":
		return adValue{kind: 'n', n: l.n - r.n}
	case "*":
		return adValue{kind: 'n', n: l.n * r.n}
	case "/":
		if r.n == 0 {
			return undefined
		}
		return adValue{kind: 'n', n: l.n / r.n}
	}
	return compare(e.op, l.n, r.n)
}

func boolNum(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func compare(op string, a, b float64) adValue {
	r := map[string]bool{"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}
	v, ok := r[op]
	if !ok {
		return undefined // arithmetic on strings
	}
	return adValue{kind: 'b', b: v}
}

// adPrec is each binary operator's precedence, loosest first.
var adPrec = map[string]int{"||": 1, "&&": 2, "==": 3, "!=": 3, "=?=": 3, "=!=": 3,
	"<": 4, "<=": 4, ">": 4, ">=": 4, "+": 5, "-": 5, "*": 6, "/": 6}

// parseClassAd parses expression s, refusing attributes outside
// domainAttrs and jobAttrs with why.
func parseClassAd(s string) (adExpr, string) {
	toks, msg := adTokens(s)
	if msg != "" {
		return nil, msg
	}
	p := &adParser{toks: toks}
	e := p.binary(1)
	if p.msg == "" && p.pos < len(p.toks) {
		p.msg = fmt.Sprintf("unexpected %q", p.toks[p.pos])
	}
	if p.msg != "" {
		return nil, p.msg
	}
	return e, ""
}

type adParser struct {
	toks []string
	pos  int
	msg  string
}

func (p *adParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *adParser) binary(min int) adExpr {
	l := p.unary()
	for p.msg == "" {
		op := p.peek()
		prec, ok := adPrec[op]
		if !ok || prec < min {
			return l
		}
		p.pos++
		l = adBin{op: op, l: l, r: p.binary(prec + 1)}
	}
	return l
}

func (p *adParser) unary() adExpr {
	t := p.peek()
	p.pos++
	switch {
	case t == "":
		p.msg = "the expression ends too early"
	case t == "!":
		return adNot{p.unary()}
	case t == "-":
		return adBin{op: "-", l: adLit{kind: 'n'}, r: p.unary()}
	case t == "(":
		e := p.binary(1)
		if p.peek() != ")" {
			if p.msg == "" {
				p.msg = "a ( without its )"
			}
			return nil
		}
		p.pos++
		return e
	case t[0] == '"':
		return adLit{kind: 's', s: t[1 : len(t)-1]}
	case t[0] >= '0' && t[0] <= '9' || t[0] == '.':
		n, err := strconv.ParseFloat(t, 64)
		if err != nil {
			p.msg = fmt.Sprintf("%q is not a number", t)
		}
		return adLit{kind: 'n', n: n}
	default:
		return p.attr(t)
	}
	return nil
}

func (p *adParser) attr(t string) adExpr {
	switch strings.ToLower(t) {
	case "true", "false":
		return adLit{kind: 'b', b: strings.EqualFold(t, "true")}
	case "undefined":
		return adLit(undefined)
	}
	scope, name, ok := strings.Cut(t, ".")
	if !ok {
		scope, name = "", t
	}
	scope = strings.ToUpper(scope)
	for _, a := range domainAttrs {
		if strings.EqualFold(a, name) && scope != "MY" {
			return adAttr(a)
		}
	}
	for _, a := range jobAttrs {
		if strings.EqualFold(a, name) && scope != "TARGET" {
			return adAttr(a)
		}
	}
	p.msg = fmt.Sprintf("%s is not an attribute sitebox's domains advertise (they have %s; the job has %s): "+
		"HTCondor would match it against machine ads the box does not have", t,
		strings.Join(domainAttrs, ", "), strings.Join(jobAttrs, ", "))
	return nil
}

// adTokens splits s into tokens: strings keep their quotes.
func adTokens(s string) ([]string, string) {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return nil, "unterminated string"
			}
			out = append(out, s[i:i+j+2])
			i += j + 2
		case isAdWord(c):
			j := i
			for j < len(s) && (isAdWord(s[j]) || s[j] == '.') {
				j++
			}
			out = append(out, s[i:j])
			i = j
		default:
			op := ""
			for _, o := range []string{"=?=", "=!=", "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "(", ")", "+", "-", "*", "/"} {
				if strings.HasPrefix(s[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, fmt.Sprintf("unexpected %q", string(c))
			}
			out = append(out, op)
			i += len(op)
		}
	}
	return out, ""
}

func isAdWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// adOf turns an attribute value from the box's API (JSON) into a ClassAd
// value.
func adOf(v any) adValue {
	switch x := v.(type) {
	case bool:
		return adValue{kind: 'b', b: x}
	case float64:
		return adValue{kind: 'n', n: x}
	case int:
		return adValue{kind: 'n', n: float64(x)}
	case int64:
		return adValue{kind: 'n', n: float64(x)}
	case string:
		return adValue{kind: 's', s: x}
	}
	return undefined
}
