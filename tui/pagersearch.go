// The detail view's search, as less and neomutt's pager have it: `/` opens a prompt on the
// view's last line, every key typed searches again from the top of the page (the view jumps
// to the first match at or below it), enter keeps the search, esc drops it; n and N go to the
// next and the previous match, wrapping around. Matches are shown in reverse video (on a
// TERM=dumb terminal, which takes no escapes, a line holding one starts with "/"), and the
// title says which match of how many is current. A query in lower case matches any case;
// one with a capital matches exactly (less's smartcase).

package tui

import (
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// pagerSearch is the detail view's search: the prompt while it is open, the query kept, and
// where it matches.
type pagerSearch struct {
	input  lineInput
	typing bool   // the prompt is open
	query  string // the search, as typed ("" for none)
	hits   []searchHit
	cur    int // the current match, an index of hits
}

// searchHit is one match: its line of the view's content, and its byte range in that line's
// text (the line without styling).
type searchHit struct{ line, start, end int }

// find lists every match of the query in lines (styled; matched as shown, without their
// styling), in order.
func (s *pagerSearch) find(lines []string) {
	s.hits = s.hits[:0]
	if s.query == "" {
		return
	}
	fold := strings.IndexFunc(s.query, unicode.IsUpper) < 0
	q := s.query
	if fold {
		q = strings.ToLower(q)
	}
	for i, l := range lines {
		text := ansi.Strip(l)
		hay := text
		if fold {
			hay = lowerSameLength(text)
		}
		for from := 0; from < len(hay); {
			j := strings.Index(hay[from:], q)
			if j < 0 {
				break
			}
			s.hits = append(s.hits, searchHit{i, from + j, from + j + len(q)})
			from += j + max(1, len(q))
		}
	}
}

// lowerSameLength lowers the letters whose lower case is as long in UTF-8 (almost all), so
// byte offsets found in the result are offsets in s; other runes are left as they are.
func lowerSameLength(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if lr := unicode.ToLower(r); len(string(lr)) == len(string(r)) {
			r = lr
		}
		b.WriteRune(r)
	}
	return b.String()
}

// first makes the first match at or after line top current (wrapping to the first match).
func (s *pagerSearch) first(top int) {
	s.cur = 0
	for i, h := range s.hits {
		if h.line >= top {
			s.cur = i
			return
		}
	}
}

// step moves to the next (d = 1) or previous (d = -1) match, wrapping around.
func (s *pagerSearch) step(d int) {
	if n := len(s.hits); n > 0 {
		s.cur = ((s.cur+d)%n + n) % n
	}
}

// status is what the title says of the search: "match 2/5 for x", "no match for x", or "".
func (s *pagerSearch) status() string {
	switch {
	case s.query == "":
		return ""
	case len(s.hits) == 0:
		return "no match for " + truncate(cellLine(s.query), 16)
	}
	return "match " + itoa(s.cur+1) + "/" + itoa(len(s.hits)) + " for " + truncate(cellLine(s.query), 16)
}

// highlight returns lines with the matches shown: reverse video, the current one also
// underlined; plain (ascii) lines holding a match start with "/" instead.
func (s *pagerSearch) highlight(c *common, lines []string) []string {
	if len(s.hits) == 0 {
		return lines
	}
	out := append([]string(nil), lines...)
	for i := 0; i < len(s.hits); {
		line := s.hits[i].line
		j := i
		for j < len(s.hits) && s.hits[j].line == line {
			j++
		}
		text := ansi.Strip(lines[line])
		if c.ascii {
			if len(text) > 0 {
				text = "/" + text[1:]
			}
			out[line] = text
		} else {
			var b strings.Builder
			at := 0
			for k := i; k < j; k++ {
				h := s.hits[k]
				b.WriteString(text[at:h.start])
				sgr := "\x1b[7m"
				if k == s.cur {
					sgr = "\x1b[7;4m"
				}
				b.WriteString(sgr + text[h.start:h.end] + "\x1b[m")
				at = h.end
			}
			b.WriteString(text[at:])
			out[line] = b.String()
		}
		i = j
	}
	return out
}

// onSearchKey is a key while the search prompt is open: enter keeps the search, esc drops
// it, anything else edits the query and searches again.
func (d *detail) onSearchKey(msg tea.Msg) {
	k := d.c.keys
	if km, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(km, k.FilterKeep):
			d.search.typing = false
			return
		case key.Matches(km, k.FilterCancel):
			d.search = pagerSearch{}
			d.showSearch()
			return
		}
	}
	d.search.input, _ = d.search.input.Update(msg)
	d.search.query = d.search.input.Value()
	d.search.find(d.lines)
	d.search.first(d.vp.YOffset())
	d.showSearch()
}

// searchKey handles the search's keys outside the prompt: `/` opens it, n and N go to the
// next and previous match. It reports whether msg was one of them.
func (d *detail) searchKey(msg tea.KeyPressMsg) bool {
	k := d.c.keys
	switch {
	case key.Matches(msg, k.Search):
		d.search.typing = true
		d.search.input = newLineInput(d.c)
		return true
	case key.Matches(msg, k.SearchNext, k.SearchPrev) && d.search.query != "":
		if key.Matches(msg, k.SearchNext) {
			d.search.step(1)
		} else {
			d.search.step(-1)
		}
		d.showSearch()
		return true
	}
	return false
}

// showSearch puts the content, with its matches highlighted, in the pager and scrolls the
// current match into view (a third of the way down, as less leaves some context above it).
func (d *detail) showSearch() {
	d.vp.SetContentLines(d.search.highlight(d.c, d.lines))
	if len(d.search.hits) == 0 {
		return
	}
	line := d.search.hits[d.search.cur].line
	h := max(1, d.vp.Height())
	if y := d.vp.YOffset(); line < y || line >= y+h {
		before := d.vp.YOffset()
		d.vp.SetYOffset(max(0, line-h/3))
		d.followScroll(before)
	}
}
