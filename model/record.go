package model

import (
	"fmt"
	"strings"
	"time"
)

// Record is one decoded data row. Row is where it was at load time, for display and links
// only: writes locate rows by ID at write time (invariant 1).
type Record struct {
	// Row is the 1-based sheet row at load time.
	Row int
	// ID is the row's identity: the ID column (inbox, queue) or the effective idempotency
	// key (dead letter). Empty when the row has none; such a row cannot be written.
	ID string
	// KeyOrigin says where a dead-letter row's key came from.
	KeyOrigin KeyOrigin
	// Status is the normalised (trimmed, lower case) status; blank reads as the role's default.
	Status string
	// Time is the parsed timestamp (inbox, dead letter) or claimedAt (queue); zero if none.
	Time time.Time
	// Cells holds every column's canonical text, extras included (len = len(Header.Headers)).
	Cells []string
	// Problems lists what is wrong with this row; the row is still shown.
	Problems []string
}

// Table is one loaded tab.
type Table struct {
	Config   TabConfig
	SheetID  int64
	Header   HeaderMap
	Hidden   []bool
	Statuses []string
	Location *time.Location
	Records  []Record
}

// StatusValue returns the tab's spelling of a status (matched case-insensitively against
// Statuses), or the status as given when the list doesn't have it.
func (t *Table) StatusValue(s string) string {
	for _, v := range t.Statuses {
		if strings.EqualFold(strings.TrimSpace(v), strings.TrimSpace(s)) {
			return v
		}
	}
	return s
}

// HasStatus reports whether a status (any case) is in the tab's list.
func (t *Table) HasStatus(s string) bool {
	for _, v := range t.Statuses {
		if strings.EqualFold(strings.TrimSpace(v), strings.TrimSpace(s)) {
			return true
		}
	}
	return false
}

// Get returns a record's cell for a field, or "" if the tab has no such column.
func (t *Table) Get(r *Record, f Field) string {
	i := t.Header.Col(f)
	if i < 0 || i >= len(r.Cells) {
		return ""
	}
	return r.Cells[i]
}

// Index returns the position of the record with an ID, or -1.
func (t *Table) Index(id string) int {
	if id == "" {
		return -1
	}
	for i := range t.Records {
		if t.Records[i].ID == id {
			return i
		}
	}
	return -1
}

// Counts returns how many records have each status.
func (t *Table) Counts() map[string]int {
	m := map[string]int{}
	for i := range t.Records {
		m[t.Records[i].Status]++
	}
	return m
}

// Sticky reports whether a record is quarantined by a sticky error (DESIGN §2).
func (t *Table) Sticky(r *Record) bool {
	switch t.Config.Role {
	case RoleDeadLetter:
		return r.Status == StatusRejected
	case RoleQueue:
		return r.Status == StatusError
	}
	return false
}

// Stale reports whether a queue record is a claim older than the tab's threshold at now.
// A claim exactly at the threshold is not yet stale.
func (t *Table) Stale(r *Record, now time.Time) bool {
	if t.Config.Role != RoleQueue || r.Status != StatusClaimed || r.Time.IsZero() {
		return false
	}
	th := t.Config.StaleAfter
	if th <= 0 {
		th = 30 * time.Minute
	}
	return now.Sub(r.Time) > th
}

// NormStatus normalises a status cell for a role: trimmed, lower case, blank → the role's
// waiting status.
func NormStatus(r Role, s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		switch r {
		case RoleInbox:
			return StatusNew
		case RoleDeadLetter:
			return StatusDead
		case RoleQueue:
			return StatusPending
		}
	}
	return s
}

// Decode builds a table from a tab's rows as read with UNFORMATTED_VALUE (row 1 = header).
// Only a missing required header fails it; a bad row is kept and flagged with its problem.
func Decode(tc TabConfig, rows [][]any, loc *time.Location) (*Table, error) {
	if loc == nil {
		loc = time.UTC
	}
	var header []string
	if len(rows) > 0 {
		header = make([]string, len(rows[0]))
		for i, v := range rows[0] {
			header[i] = strings.TrimSpace(CellString(v))
		}
	}
	hm, err := MapHeaders(tc, header)
	if err != nil {
		return nil, err
	}
	t := &Table{Config: tc, Header: hm, Location: loc, Statuses: tc.Statuses}
	if len(t.Statuses) == 0 {
		t.Statuses = DefaultStatuses(tc.Role)
	}
	width := len(header)
	t.Records = make([]Record, 0, len(rows))
	seen := make(map[string][]int, len(rows))
	timeField := FTimestamp
	if tc.Role == RoleQueue {
		timeField = FClaimedAt
	}
	tcol := hm.Col(timeField)
	for ri := 1; ri < len(rows); ri++ {
		raw := rows[ri]
		if isEmptyRow(raw) {
			continue
		}
		w := width
		if len(raw) > w {
			w = len(raw)
		}
		cells := make([]string, w)
		for ci, v := range raw {
			cells[ci] = CellString(v)
		}
		rec := Record{Row: ri + 1, Cells: cells}
		rec.Status = NormStatus(tc.Role, get(cells, hm.Col(FStatus)))
		if tcol >= 0 && tcol < len(raw) && raw[tcol] != nil && CellString(raw[tcol]) != "" {
			if tm, ok := ParseTime(raw[tcol], loc); ok {
				rec.Time = tm
			} else {
				rec.Problems = append(rec.Problems, fmt.Sprintf("%s %q is not a date", timeField, CellString(raw[tcol])))
			}
		}
		switch tc.Role {
		case RoleDeadLetter:
			decodeDeadLetter(t, &rec)
		default:
			rec.ID = strings.TrimSpace(get(cells, hm.Col(FID)))
			if rec.ID == "" {
				rec.Problems = append(rec.Problems, "no ID: this row can't be changed from triage until its ID cell is filled")
			}
			if tc.Role == RoleQueue {
				if p := get(cells, hm.Col(FPayload)); strings.TrimSpace(p) != "" && !validJSON(p) {
					rec.Problems = append(rec.Problems, "payload is not valid JSON")
				}
				if !knownStatus(rec.Status, DefaultStatuses(RoleQueue)) {
					rec.Problems = append(rec.Problems, fmt.Sprintf("unknown status %q (expected pending, claimed, done or error)", rec.Status))
				}
			}
		}
		if rec.ID != "" {
			seen[rec.ID] = append(seen[rec.ID], len(t.Records))
		}
		t.Records = append(t.Records, rec)
	}
	flagDuplicates(t, seen)
	return t, nil
}

// flagDuplicates marks every row of an identity that more than one row has. None of them can
// be written (the store could not tell which one is meant) or replayed (a dead letter's
// identity is its idempotency key: two rows with one key are one call), so all of them lose
// their ID and say which rows share it and what to change.
func flagDuplicates(t *Table, seen map[string][]int) {
	what := "ID"
	fix := "change one ID cell in the sheet"
	if t.Config.Role == RoleDeadLetter {
		what, fix = "idempotency key", "give one of them its own key cell in the sheet, or delete the copy there"
	}
	for id, idx := range seen {
		if len(idx) < 2 {
			continue
		}
		rows := make([]string, len(idx))
		for i, ri := range idx {
			rows[i] = fmt.Sprint(t.Records[ri].Row)
		}
		for _, ri := range idx {
			r := &t.Records[ri]
			r.Problems = append(r.Problems, fmt.Sprintf("rows %s share the %s %q: none of them can be changed from triage until you %s", strings.Join(rows, ", "), what, id, fix))
			r.ID = ""
		}
	}
}

func knownStatus(s string, list []string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func get(cells []string, i int) string {
	if i < 0 || i >= len(cells) {
		return ""
	}
	return cells[i]
}

func isEmptyRow(r []any) bool {
	for _, v := range r {
		if CellString(v) != "" {
			return false
		}
	}
	return true
}

// Workbook is a loaded spreadsheet: the configured tabs that exist, and what is wrong with
// the ones that don't load.
type Workbook struct {
	SpreadsheetID string
	Title         string
	Location      *time.Location
	Tabs          []*Table
	// Missing are configured tabs that the spreadsheet does not have (`triage init` adds them).
	Missing []TabConfig
	// Broken are tabs that exist but can't be used (a missing required header).
	Broken []TabError
	// Loaded is when the load finished.
	Loaded time.Time
}

// TabError is a tab that could not be loaded, and why.
type TabError struct {
	Config TabConfig
	Err    error
}

// Tab returns the loaded table of a role, or nil.
func (w *Workbook) Tab(r Role) *Table {
	if w == nil {
		return nil
	}
	for _, t := range w.Tabs {
		if t.Config.Role == r {
			return t
		}
	}
	return nil
}

// TabNamed returns the loaded table with a name (case-insensitive), or nil.
func (w *Workbook) TabNamed(name string) *Table {
	if w == nil {
		return nil
	}
	for _, t := range w.Tabs {
		if strings.EqualFold(t.Config.Name, name) {
			return t
		}
	}
	return nil
}
