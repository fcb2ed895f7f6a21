package model

import (
	"strings"
	"testing"
)

// TestCheckColumnsMatchesMapHeaders: a mapping CheckColumns accepts is honoured by MapHeaders
// on the header row `triage init` would write for it (every field found in its own column),
// and one it refuses is not: the rule and the reader agree.
func TestCheckColumnsMatchesMapHeaders(t *testing.T) {
	cases := []struct {
		role    Role
		cols    map[Field]string
		refused string // "" = accepted
	}{
		{RoleInbox, map[Field]string{FID: "Submission ID"}, ""},
		{RoleInbox, map[Field]string{FID: "ID "}, ""},
		{RoleDeadLetter, map[Field]string{FKey: "url", FURL: "endpoint"}, ""},
		{RoleDeadLetter, map[Field]string{FPayload: "body"}, ""},
		{RoleDeadLetter, map[Field]string{FKey: "url"}, "url column's own header"},
		{RoleDeadLetter, map[Field]string{FKey: " URL "}, "url column's own header"},
		{RoleDeadLetter, map[Field]string{FSource: "Payload"}, "payload column's own header"},
		{RoleDeadLetter, map[Field]string{FKey: "ref", FError: "Ref"}, "both mapped"},
		{RoleQueue, map[Field]string{FID: "status"}, "status column's own header"},
		{RoleInbox, map[Field]string{FID: "  "}, "blank header"},
		{RoleInbox, map[Field]string{"bogus": "x"}, `no column "bogus"`},
	}
	for _, c := range cases {
		tc := DefaultTabConfig(c.role)
		tc.Columns = c.cols
		probs := CheckColumns(tc)
		if c.refused == "" {
			if len(probs) != 0 {
				t.Errorf("%s %v refused: %v", c.role, c.cols, probs)
			}
		} else if len(probs) == 0 || !strings.Contains(probs[0].Msg, c.refused) {
			t.Errorf("%s %v: %v, want a problem saying %q", c.role, c.cols, probs, c.refused)
		}
		if _, unknown := c.cols["bogus"]; unknown {
			continue
		}
		// The header row init writes: each field's configured or default header.
		var header []string
		var fields []Field
		for _, col := range SchemaFor(c.role).Columns {
			h := col.Header
			if o, ok := c.cols[col.Field]; ok && strings.TrimSpace(o) != "" {
				h = o
			}
			header = append(header, h)
			fields = append(fields, col.Field)
		}
		hm, err := MapHeaders(tc, header)
		honoured := err == nil
		for i, f := range fields {
			if hm.Col(f) != i {
				honoured = false
			}
		}
		if honoured != (c.refused == "") {
			t.Errorf("%s %v: MapHeaders honours it = %v, but CheckColumns says %v", c.role, c.cols, honoured, probs)
		}
	}
}
