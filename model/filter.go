package model

import (
	"strings"
)

// Filter is a parsed filter query: whitespace-separated terms, all of which must match.
// A term is free text (matched case-insensitively anywhere in the row), or `field:value`
// (a schema field or any header name; `status:` matches exactly, others by substring; a
// prefix that names no column makes the whole term free text); a leading `!` negates a term.
// On tabs with an error column, `kind:` matches the error's kind (ErrorKind) by prefix.
type Filter struct {
	Query string
	terms []term
}

type term struct {
	neg   bool
	field string // normalised field or header name; "" = free text
	value string // lower case
	word  string // the whole term, lower case, used as free text when field names no column
}

// ParseFilter parses a query. It never fails: anything unrecognised is free text.
func ParseFilter(q string) Filter {
	f := Filter{Query: q}
	for _, w := range strings.Fields(q) {
		t := term{}
		if strings.HasPrefix(w, "!") {
			t.neg = true
			w = w[1:]
		}
		t.word = strings.ToLower(w)
		if i := strings.IndexByte(w, ':'); i > 0 {
			t.field = NormHeader(w[:i])
			w = w[i+1:]
		}
		t.value = strings.ToLower(w)
		if t.value == "" && t.field == "" {
			continue
		}
		f.terms = append(f.terms, t)
	}
	return f
}

// Empty reports whether the filter matches everything.
func (f Filter) Empty() bool { return len(f.terms) == 0 }

// Matcher is a filter bound to one table, with field columns resolved once.
type Matcher struct {
	t     *Table
	terms []boundTerm
}

type boundTerm struct {
	term
	col    int  // column to test; -1 = whole row
	status bool // exact match on the normalised status
	kind   int  // >= 0: match ErrorKind of this column (the error cell) by prefix
}

// Bind resolves the filter's field names against a table.
func (f Filter) Bind(t *Table) Matcher {
	m := Matcher{t: t}
	for _, tm := range f.terms {
		b := boundTerm{term: tm, col: -1, kind: -1}
		if tm.field == "kind" && schemaCol(t, "kind") < 0 && t.Header.Col("kind") < 0 {
			// kind: is the error's kind (ErrorKind: "503", "timeout"), for tabs with an error
			// column, unless the sheet has a column of that name.
			if i := t.Header.Col(FError); i >= 0 {
				b.kind = i
			} else if i := t.Header.Col(FLastError); i >= 0 {
				b.kind = i
			}
		}
		if b.kind >= 0 {
			b.col = -2
		} else if tm.field != "" {
			b.col = -2
			if Field(tm.field) == FStatus {
				b.status = true
			} else if i := schemaCol(t, tm.field); i >= 0 {
				b.col = i
			} else if i := t.Header.Col(Field(strings.ReplaceAll(tm.field, " ", ""))); i >= 0 {
				b.col = i
			} else if i := t.Header.Col(Field(tm.field)); i >= 0 {
				b.col = i
			} else {
				for i, h := range t.Header.Headers {
					if NormHeader(h) == tm.field {
						b.col = i
						break
					}
				}
			}
			if b.col == -2 && !b.status && b.kind < 0 {
				// Not a column: "https://x" or "re:hello" is text to find.
				b.col, b.value = -1, b.word
			}
		}
		m.terms = append(m.terms, b)
	}
	return m
}

// Match reports whether a record passes every term. hay is the record's lower-cased text
// (see Haystack), passed in so callers can cache it across keystrokes.
func (m Matcher) Match(r *Record, hay string) bool {
	for _, b := range m.terms {
		var ok bool
		switch {
		case b.status:
			ok = r.Status == b.value || (b.value == "" && r.Status == "")
		case b.kind >= 0:
			ok = b.kind < len(r.Cells) && strings.HasPrefix(ErrorKind(r.Cells[b.kind]), b.value) && (b.value != "" || strings.TrimSpace(r.Cells[b.kind]) != "")
		case b.col >= 0:
			ok = b.col < len(r.Cells) && containsFold(r.Cells[b.col], b.value)
		default:
			ok = strings.Contains(hay, b.value)
		}
		if ok == b.neg {
			return false
		}
	}
	return true
}

// Haystack is the lower-cased text of a record that free-text terms search: every cell, its
// status and its problems, separated so a term can't match across cells.
func Haystack(r *Record) string {
	var b strings.Builder
	for _, c := range r.Cells {
		b.WriteString(c)
		b.WriteByte('\x1f')
	}
	b.WriteString(r.Status)
	for _, p := range r.Problems {
		b.WriteByte('\x1f')
		b.WriteString(p)
	}
	return strings.ToLower(b.String())
}

func containsFold(s, sub string) bool {
	if sub == "" {
		return true
	}
	if isASCIILower(s) {
		return strings.Contains(s, sub)
	}
	return strings.Contains(strings.ToLower(s), sub)
}

func isASCIILower(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || (c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// schemaCol finds the column a filter field names through the role's schema: its field
// name, default header or any alias ("error" is a queue's lastError, "body" a payload).
func schemaCol(t *Table, name string) int {
	for _, c := range SchemaFor(t.Config.Role).Columns {
		if NormHeader(string(c.Field)) == name || NormHeader(c.Header) == name {
			return t.Header.Col(c.Field)
		}
	}
	for _, c := range SchemaFor(t.Config.Role).Columns {
		for _, a := range c.Aliases {
			if NormHeader(a) == name {
				return t.Header.Col(c.Field)
			}
		}
	}
	return -1
}
