package emulator

import (
	"math"
	"strconv"
	"strings"
)

// The emulator computes a formula only when it is arithmetic on constants ("=4/2",
// "= 1 / 1024", "=(1+2)*3^2"): numbers, + - * / ^, unary signs and parentheses, as Sheets
// reads them (a unary sign binds tighter than ^, so =-2^2 is 4; ^ groups from the left). Any
// other formula (a cell reference, a function, text, a division by zero, whose value Google
// shows as an error) has a value the emulator doesn't know, and reading that value is refused
// (501) rather than answered with the formula's text.

// formulaResult is the value of the formula text f ("=..."), and whether the emulator
// computes it.
func formulaResult(f string) (float64, bool) {
	p := &arith{s: strings.TrimPrefix(f, "=")}
	v, ok := p.sum()
	p.space()
	if !ok || p.i != len(p.s) || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// arith is a recursive-descent reader of constant arithmetic.
type arith struct {
	s string
	i int
}

func (p *arith) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

// next skips spaces and reports the next byte (0 at the end).
func (p *arith) next() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *arith) sum() (float64, bool) {
	v, ok := p.product()
	for ok {
		switch p.next() {
		case '+':
			p.i++
			var w float64
			w, ok = p.product()
			v += w
		case '-':
			p.i++
			var w float64
			w, ok = p.product()
			v -= w
		default:
			return v, true
		}
	}
	return 0, false
}

func (p *arith) product() (float64, bool) {
	v, ok := p.power()
	for ok {
		switch p.next() {
		case '*':
			p.i++
			var w float64
			w, ok = p.power()
			v *= w
		case '/':
			p.i++
			var w float64
			w, ok = p.power()
			if w == 0 {
				return 0, false // #DIV/0! in Sheets
			}
			v /= w
		default:
			return v, true
		}
	}
	return 0, false
}

func (p *arith) power() (float64, bool) {
	v, ok := p.unary()
	for ok && p.next() == '^' {
		p.i++
		var w float64
		w, ok = p.unary()
		v = math.Pow(v, w)
	}
	return v, ok
}

func (p *arith) unary() (float64, bool) {
	switch p.next() {
	case '-':
		p.i++
		v, ok := p.unary()
		return -v, ok
	case '+':
		p.i++
		return p.unary()
	case '(':
		p.i++
		v, ok := p.sum()
		if !ok || p.next() != ')' {
			return 0, false
		}
		p.i++
		return v, true
	}
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] == '.') {
		p.i++
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		j := p.i + 1
		if j < len(p.s) && (p.s[j] == '+' || p.s[j] == '-') {
			j++
		}
		if j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			for p.i = j; p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9'; p.i++ {
			}
		}
	}
	if p.i == start {
		return 0, false
	}
	v, err := strconv.ParseFloat(p.s[start:p.i], 64)
	return v, err == nil
}

// formulaShown reports whether the emulator can give what Google shows for the formula cell c
// under a render option: its text (FORMULA), else a result it computes; formatted, only a
// result of at most 10 significant digits, as Sheets' automatic number format shows more
// rounded, in a way the emulator doesn't model.
func formulaShown(c cell, opt string) bool {
	if opt == "FORMULA" {
		return true
	}
	v, ok := formulaResult(c.v.(string))
	if !ok {
		return false
	}
	return opt != "FORMATTED_VALUE" || significantDigits(v) <= 10
}

// significantDigits counts the significant digits of v's shortest decimal form.
func significantDigits(v float64) int {
	s := strconv.FormatFloat(math.Abs(v), 'e', -1, 64)
	mant, _, _ := strings.Cut(s, "e")
	return len(strings.ReplaceAll(mant, ".", ""))
}
