// Package model is triage's domain: tab roles, their schemas, decoded records, edits and
// statuses. It does no I/O, so every rule here is testable without a network.
//
// The design it follows, and the section (§N) and invariant numbers its comments cite, are in
// docs/DESIGN.md.
package model

import (
	"fmt"
	"strings"
	"time"
)

// Role says what a tab is for; columns and statuses follow from it.
type Role string

// The three roles of DESIGN §2.
const (
	RoleInbox      Role = "inbox"
	RoleDeadLetter Role = "deadletter"
	RoleQueue      Role = "queue"
)

// Roles lists the roles in their display order.
var Roles = []Role{RoleInbox, RoleDeadLetter, RoleQueue}

// Field is a canonical column name within a role's schema (lower case).
type Field string

// Canonical fields. A field belongs to one or more roles' schemas.
const (
	FTimestamp  Field = "timestamp"
	FName       Field = "name"
	FEmail      Field = "email"
	FMessage    Field = "message"
	FStatus     Field = "status"
	FID         Field = "id"
	FSource     Field = "source"
	FURL        Field = "url"
	FPayload    Field = "payload"
	FError      Field = "error"
	FAttempts   Field = "attempts"
	FMethod     Field = "method"
	FKey        Field = "key"
	FReplayedAt Field = "replayed_at"
	FType       Field = "type"
	FClaimedBy  Field = "claimedby"
	FClaimedAt  Field = "claimedat"
	FLastError  Field = "lasterror"
	FUpdatedAt  Field = "updatedat"
	FTriagedBy  Field = "triaged_by"
	FTriagedAt  Field = "triaged_at"
)

// Column describes one column of a schema: the header it is created with, the other header
// spellings that mean the same thing, and whether a tab without it is unusable.
type Column struct {
	Field    Field
	Header   string
	Aliases  []string
	Required bool
}

// Schema is the column set of a role, in the order `triage init` writes headers.
type Schema struct {
	Role    Role
	Columns []Column
}

// SchemaFor returns the built-in schema of a role.
func SchemaFor(r Role) Schema {
	switch r {
	case RoleInbox:
		return Schema{Role: r, Columns: []Column{
			{Field: FTimestamp, Header: "Timestamp", Aliases: []string{"time", "date", "submitted", "submitted at", "created"}},
			{Field: FName, Header: "Name", Aliases: []string{"full name", "from"}},
			{Field: FEmail, Header: "Email", Aliases: []string{"e-mail", "email address", "mail"}},
			{Field: FMessage, Header: "Message", Aliases: []string{"body", "text", "comment", "comments"}},
			{Field: FStatus, Header: "Status", Aliases: []string{"state"}, Required: true},
			{Field: FID, Header: "ID", Aliases: []string{"submission id", "submissionid", "message id", "uuid"}, Required: true},
			{Field: FTriagedBy, Header: "triaged_by", Aliases: []string{"triaged by"}},
			{Field: FTriagedAt, Header: "triaged_at", Aliases: []string{"triaged at"}},
		}}
	case RoleDeadLetter:
		return Schema{Role: r, Columns: []Column{
			{Field: FTimestamp, Header: "timestamp", Aliases: []string{"time", "failed_at", "failed at", "created"}},
			{Field: FSource, Header: "source", Required: true},
			{Field: FURL, Header: "url", Aliases: []string{"endpoint", "target"}, Required: true},
			{Field: FPayload, Header: "payload", Aliases: []string{"body"}, Required: true},
			{Field: FError, Header: "error", Aliases: []string{"last_error", "lasterror"}},
			{Field: FAttempts, Header: "attempts", Aliases: []string{"tries"}},
			{Field: FMethod, Header: "method", Aliases: []string{"verb"}},
			{Field: FKey, Header: "key", Aliases: []string{"idempotency_key", "idempotency key", "idempotency-key"}},
			{Field: FStatus, Header: "status", Aliases: []string{"state"}},
			{Field: FReplayedAt, Header: "replayed_at", Aliases: []string{"replayed at", "replayedat"}},
			{Field: FTriagedBy, Header: "triaged_by", Aliases: []string{"triaged by"}},
			{Field: FTriagedAt, Header: "triaged_at", Aliases: []string{"triaged at"}},
		}}
	case RoleQueue:
		return Schema{Role: r, Columns: []Column{
			{Field: FID, Header: "id", Aliases: []string{"job id", "job_id"}, Required: true},
			{Field: FType, Header: "type", Aliases: []string{"kind"}},
			{Field: FPayload, Header: "payload", Aliases: []string{"body"}},
			{Field: FStatus, Header: "status", Aliases: []string{"state"}, Required: true},
			{Field: FClaimedBy, Header: "claimedBy", Aliases: []string{"claimed_by", "claimed by", "worker"}},
			{Field: FClaimedAt, Header: "claimedAt", Aliases: []string{"claimed_at", "claimed at"}},
			{Field: FLastError, Header: "lastError", Aliases: []string{"last_error", "last error", "error"}},
			{Field: FUpdatedAt, Header: "updatedAt", Aliases: []string{"updated_at", "updated at"}},
			{Field: FAttempts, Header: "attempts", Aliases: []string{"tries"}},
			{Field: FTriagedBy, Header: "triaged_by", Aliases: []string{"triaged by"}},
			{Field: FTriagedAt, Header: "triaged_at", Aliases: []string{"triaged at"}},
		}}
	}
	return Schema{Role: r}
}

// Column returns the schema's column for a field.
func (s Schema) Column(f Field) (Column, bool) {
	for _, c := range s.Columns {
		if c.Field == f {
			return c, true
		}
	}
	return Column{}, false
}

// DefaultTabName is the tab a role reads when the config names none.
func DefaultTabName(r Role) string {
	switch r {
	case RoleInbox:
		return "Inbox"
	case RoleDeadLetter:
		return "failed_calls"
	case RoleQueue:
		return "Jobs"
	}
	return string(r)
}

// DefaultStatuses is the ordered status list of a role when neither the config nor a
// data-validation dropdown gives one.
func DefaultStatuses(r Role) []string {
	switch r {
	case RoleInbox:
		return []string{"new", "read", "replied", "done", "spam"}
	case RoleDeadLetter:
		return []string{StatusDead, StatusDelivered, StatusRejected, StatusDiscarded}
	case RoleQueue:
		return []string{StatusPending, StatusClaimed, StatusDone, StatusError}
	}
	return nil
}

// Statuses with a meaning to triage itself.
const (
	StatusNew       = "new"
	StatusDead      = "dead"
	StatusDelivered = "delivered"
	StatusRejected  = "rejected"
	StatusDiscarded = "discarded"
	StatusPending   = "pending"
	StatusClaimed   = "claimed"
	StatusDone      = "done"
	StatusError     = "error"
)

// TabConfig is one configured tab: which role it plays, its name in the sheet, and the
// per-tab overrides of DESIGN §8.
type TabConfig struct {
	Role Role
	Name string
	// Columns maps a field to the header used for it in this sheet, where it differs.
	Columns map[Field]string
	// Statuses, when set, is the ordered status list (else the dropdown, else the default).
	Statuses []string
	// StaleAfter is the queue's stale-claim threshold (default 30 minutes).
	StaleAfter time.Duration
	// BodyKeyFields maps a dead-letter source to the payload field that carries its
	// idempotency key ("id" for `key = "body:id"`). Sources absent here have none.
	BodyKeyFields map[string]string
	// MarkReadOnOpen (inbox only) sets a new message to read when the TUI opens it in the
	// detail view. Off by default: reading is not triaging unless the owner says so.
	MarkReadOnOpen bool
	// Views are the tab's saved filters, in the config's order.
	Views []View
	// TableColumns, when set, are the columns the TUI's table shows and their order: a
	// column of the role by its title or field, or another of the sheet's by its header.
	TableColumns []string
}

// View is a saved filter of a tab: what the TUI's view bar offers by name.
type View struct {
	Name   string
	Filter string
}

// DefaultTabConfig returns the configuration of a role with every default applied.
func DefaultTabConfig(r Role) TabConfig {
	return TabConfig{Role: r, Name: DefaultTabName(r), StaleAfter: 30 * time.Minute}
}

// HeaderMap is where each field of a schema was found in a tab's header row.
type HeaderMap struct {
	// Headers is the header row as found, one entry per column (extras included).
	Headers []string
	// Index maps a field to its 0-based column; absent fields are not in the map.
	Index map[Field]int
}

// Col returns the column index of a field, or -1.
func (h HeaderMap) Col(f Field) int {
	if i, ok := h.Index[f]; ok {
		return i
	}
	return -1
}

// Has reports whether the tab has a column for the field.
func (h HeaderMap) Has(f Field) bool { _, ok := h.Index[f]; return ok }

// MissingHeaderError reports required columns a tab lacks, with what was found instead.
type MissingHeaderError struct {
	Tab     string
	Role    Role
	Missing []string
	Found   []string
}

func (e *MissingHeaderError) Error() string {
	found := "no headers at all (row 1 is empty)"
	if len(e.Found) > 0 {
		q := make([]string, len(e.Found))
		for i, f := range e.Found {
			q[i] = fmt.Sprintf("%q", f)
		}
		found = "headers found: " + strings.Join(q, ", ")
	}
	return fmt.Sprintf("tab %q (%s) is missing required column %s in row 1; %s. Add the header, map it in config ([tabs.%s.columns]), or run `triage init`",
		e.Tab, e.Role, strings.Join(quoteAll(e.Missing), ", "), found, e.Role)
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}

// NormHeader folds a header for comparison: trimmed, lower case, inner spaces collapsed.
func NormHeader(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// MapHeaders finds each schema field in a header row. Matching is case-insensitive and
// trimmed; a configured header name beats the default name, which beats an alias. The first
// matching column wins, so a later duplicate is treated as an extra column.
func MapHeaders(tc TabConfig, header []string) (HeaderMap, error) {
	schema := SchemaFor(tc.Role)
	hm := HeaderMap{Headers: header, Index: map[Field]int{}}
	norm := make([]string, len(header))
	for i, h := range header {
		norm[i] = NormHeader(h)
	}
	find := func(name string) int {
		n := NormHeader(name)
		if n == "" {
			return -1
		}
		for i, h := range norm {
			if h == n {
				return i
			}
		}
		return -1
	}
	used := map[int]bool{}
	var missing []string
	for _, c := range schema.Columns {
		idx := -1
		if override, ok := tc.Columns[c.Field]; ok && override != "" {
			idx = find(override)
		} else {
			idx = find(c.Header)
			if idx < 0 || used[idx] {
				idx = -1
				for _, a := range c.Aliases {
					if j := find(a); j >= 0 && !used[j] {
						idx = j
						break
					}
				}
			}
		}
		if idx >= 0 && used[idx] {
			idx = -1
		}
		if idx < 0 {
			if c.Required {
				name := c.Header
				if o, ok := tc.Columns[c.Field]; ok && o != "" {
					name = o
				}
				missing = append(missing, name)
			}
			continue
		}
		used[idx] = true
		hm.Index[c.Field] = idx
	}
	if len(missing) > 0 {
		var found []string
		for _, h := range header {
			if strings.TrimSpace(h) != "" {
				found = append(found, h)
			}
		}
		return hm, &MissingHeaderError{Tab: tc.Name, Role: tc.Role, Missing: missing, Found: found}
	}
	return hm, nil
}
