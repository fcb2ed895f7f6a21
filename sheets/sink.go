package sheets

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/triage-dev/triage/model"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// DeadLetter appends failed calls to the dead-letter tab (the configured deadletter tab, else
// failed_calls), one row each with status dead: the dead-letter sink of DESIGN §10, which
// replay.Producer calls. It costs two requests for any number of letters: one read of the
// header row, then one values.append, RAW (invariant 2: a payload starting with "=" stays
// text). Columns are found by header name, as a load finds them: optional columns the tab
// lacks are skipped, extra columns are left blank.
//
// It records every letter or none: a letter that can't be stored whole (a field over the
// 50,000-character cell limit, a payload that is not UTF-8) refuses the batch before anything
// is sent, naming it, because shortening a payload would change the call a replay sends. A
// tab without a key column refuses a batch that carries keys (a row must keep the key that
// was sent).
//
// Both requests are retried like every request of the store (429, 5xx, network errors). An
// append is not idempotent: when a try that failed had in fact landed, the retry leaves those
// rows twice, under the same keys; a replay refuses the second of each, naming the first, so
// nothing is sent twice.
//
// Why two requests and not one with a cached header: a header cached between batches (hours
// apart) would put a batch under the wrong columns whenever someone reorders them meanwhile,
// and rows appended in the wrong place can't be moved back without writing by row number
// (invariant 1). Read fresh, the header can only change in the one round trip between the
// read and the append.
func (s *Store) DeadLetter(ctx context.Context, letters []model.DeadLetter) error {
	const op = "record dead letters"
	if len(letters) == 0 {
		return nil
	}
	if s.readOnly {
		return fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	var bad []string
	for _, l := range letters {
		if err := model.CheckDeadLetter(l); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: nothing appended: %s", op, strings.Join(bad, "; "))
	}
	tc := s.deadLetterTab()
	tab := quoteTab(tc.Name)

	var head *sheetsapi.ValueRange
	err := s.call(ctx, op, func(ctx context.Context) error {
		var err error
		head, err = s.svc.Spreadsheets.Values.Get(s.id, tab+"!1:1").ValueRenderOption(valueRender).Context(ctx).Do()
		return err
	})
	if err != nil {
		return err
	}
	var header []string
	if len(head.Values) > 0 {
		for _, v := range head.Values[0] {
			header = append(header, model.CellString(v))
		}
	}
	hm, err := model.MapHeaders(tc, header)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if !hm.Has(model.FKey) {
		for _, l := range letters {
			if l.Key != "" {
				return fmt.Errorf("%s: tab %q has no key column, so the keys these calls were sent with would be lost: add a %q header (or map one in [tabs.deadletter.columns]); nothing appended", op, tc.Name, "key")
			}
		}
	}

	rows := make([][]any, len(letters))
	for i, l := range letters {
		rows[i] = letterRow(hm, len(header), statusSpelling(tc, model.StatusDead), l)
	}
	width := len(header)
	// Whole columns, so the append finds the table however long it is and writes after it.
	rng := fmt.Sprintf("%s!A:%s", tab, model.ColumnLetter(width-1))
	return s.call(ctx, op, func(ctx context.Context) error {
		_, err := s.svc.Spreadsheets.Values.Append(s.id, rng, &sheetsapi.ValueRange{Values: rows}).
			ValueInputOption("RAW").InsertDataOption("INSERT_ROWS").Context(ctx).Do()
		return err
	})
}

// deadLetterTab is the store's dead-letter tab: the first configured one, else the default.
func (s *Store) deadLetterTab() model.TabConfig {
	for _, tc := range s.tabs {
		if tc.Role == model.RoleDeadLetter {
			return tc
		}
	}
	return model.DefaultTabConfig(model.RoleDeadLetter)
}

// letterRow lays a dead letter out under a header: each field in its column, "" elsewhere.
// Every value is a string, so RAW stores it as text exactly (attempts too, as a replay writes
// them).
func letterRow(hm model.HeaderMap, width int, dead string, l model.DeadLetter) []any {
	row := make([]any, width)
	for i := range row {
		row[i] = ""
	}
	set := func(f model.Field, v string) {
		if c := hm.Col(f); c >= 0 && c < width {
			row[c] = v
		}
	}
	ts := ""
	if !l.Timestamp.IsZero() {
		ts = model.FormatTime(l.Timestamp)
	}
	set(model.FTimestamp, ts)
	set(model.FSource, l.Source)
	set(model.FURL, l.URL)
	set(model.FPayload, l.Payload)
	set(model.FError, l.Error)
	set(model.FAttempts, strconv.Itoa(l.Attempts))
	set(model.FMethod, l.Method)
	set(model.FKey, l.Key)
	set(model.FStatus, dead)
	return row
}

// statusSpelling is a status as the tab's configured list spells it ("Dead"), so a new row
// matches the tab's dropdown; the status itself where the list doesn't have it.
func statusSpelling(tc model.TabConfig, status string) string {
	for _, v := range tc.Statuses {
		if strings.EqualFold(strings.TrimSpace(v), status) {
			return v
		}
	}
	return status
}
