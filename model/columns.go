package model

import (
	"fmt"
	"sort"
)

// ColumnProblem is one `[tabs.ROLE.columns]` entry that MapHeaders could not honour.
type ColumnProblem struct {
	// Field is the mapped field, as configured (lower case).
	Field Field
	// Msg says what is wrong and what to do.
	Msg string
}

// CheckColumns is the rule for a tab's column mappings (TabConfig.Columns), shared by
// `config check` and the runtime's config load (invariant 12). It refuses:
//   - a field the role's schema doesn't have;
//   - a blank header name (MapHeaders would look for a column with no name, `triage init`
//     would write the default one: the two would disagree);
//   - two fields mapped to the same header (compared as MapHeaders compares: trimmed,
//     case-insensitive, inner spaces collapsed);
//   - a field mapped to the default header of another field that keeps its default (key =
//     "url"): on a sheet laid out as `triage init` writes it, or with the default headers,
//     both fields claim one column; MapHeaders gives it to the first in schema order and the
//     other is silently absent, so a key column could be ignored and keys minted instead.
//
// Problems are sorted by field.
func CheckColumns(tc TabConfig) []ColumnProblem {
	schema := SchemaFor(tc.Role)
	fields := make([]Field, 0, len(tc.Columns))
	for f := range tc.Columns {
		fields = append(fields, f)
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i] < fields[j] })
	var out []ColumnProblem
	for _, f := range fields {
		h := tc.Columns[f]
		add := func(format string, a ...any) {
			out = append(out, ColumnProblem{Field: f, Msg: fmt.Sprintf(format, a...)})
		}
		if _, ok := schema.Column(f); !ok {
			add("tab %s has no column %q to rename", tc.Role, string(f))
			continue
		}
		n := NormHeader(h)
		if n == "" {
			add("tab %s: column %s is mapped to a blank header name: name its header, or remove the line to use the default (%q)", tc.Role, f, defaultHeader(schema, f))
			continue
		}
		for _, g := range fields {
			if g != f && NormHeader(tc.Columns[g]) == n {
				if f < g {
					add("tab %s: columns %s and %s are both mapped to the header %q: each field needs its own column", tc.Role, f, g, h)
				}
			}
		}
		for _, c := range schema.Columns {
			if c.Field == f {
				continue
			}
			if _, remapped := tc.Columns[c.Field]; remapped {
				continue
			}
			if NormHeader(c.Header) == n {
				add("tab %s: column %s is mapped to %q, which is the %s column's own header: both would claim one column; pick another header, or map %s too", tc.Role, f, h, c.Field, c.Field)
			}
		}
	}
	return out
}

func defaultHeader(s Schema, f Field) string {
	if c, ok := s.Column(f); ok {
		return c.Header
	}
	return string(f)
}
