package sheets

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/triage-dev/triage/model"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// A write that could not put back every value of its own (model.Damage: rows kept moving
// through every round) leaves a visible sheet listing those cells, so that the next run of any
// triage knows too, not only the person who read the error: until someone fixes the cells and
// deletes the sheet, no key is written or checked on that tab, so no replay sends anything from
// it (invariant 3: a row whose key can't be proven is never sent).

// damagePrefix starts the title of a damage sheet; the tab's name and the time follow.
const damagePrefix = "triage: check "

// damageTitle names the damage sheet of a tab (Sheets titles are at most 100 characters).
func damageTitle(tab, stamp string) string {
	name := tab
	for utf8.RuneCountInString(damagePrefix+name+" "+stamp) > 100 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return damagePrefix + name + " " + stamp
}

// damagedTab returns the configured tab a damage sheet's title names, if it is one.
func damagedTab(title string, tabs []model.TabConfig) (string, bool) {
	rest, ok := strings.CutPrefix(title, damagePrefix)
	if !ok || len(rest) < len(damageStamp)+1 {
		return "", false
	}
	name := rest[:len(rest)-len(damageStamp)-1] // the name, maybe cut short (see damageTitle)
	for _, tc := range tabs {
		if name != "" && strings.HasPrefix(tc.Name, name) {
			return tc.Name, true
		}
	}
	return "", false
}

// damageStamp is the layout of the time at the end of a damage sheet's title.
const damageStamp = "2006-01-02 15:04:05"

// recordDamage adds the damage sheet of each tab with damage (one request). A failure is only
// returned: the damage is in the caller's result either way.
func (s *Store) recordDamage(ctx context.Context, op string, damage []model.Damage) error {
	byTab := map[string][]model.Damage{}
	var order []string
	for _, d := range damage {
		if byTab[d.Tab] == nil {
			order = append(order, d.Tab)
		}
		byTab[d.Tab] = append(byTab[d.Tab], d)
	}
	text := func(v string) *sheetsapi.CellData {
		return &sheetsapi.CellData{UserEnteredValue: &sheetsapi.ExtendedValue{StringValue: &v}}
	}
	var reqs []*sheetsapi.Request
	for _, tab := range order {
		e := newEntry(s.now())
		title := damageTitle(tab, s.now().UTC().Format(damageStamp))
		rows := []*sheetsapi.RowData{{Values: []*sheetsapi.CellData{
			text("triage could not put these cells of " + strconv.Quote(tab) + " back: rows kept moving while it wrote. Set each cell back to what it held, then delete this sheet. Until then, no replay sends anything from that tab.")}},
			{Values: []*sheetsapi.CellData{text("row (when last seen)"), text("ID"), text("column"), text("triage's value"), text("what it held")}}}
		for _, d := range byTab[tab] {
			rows = append(rows, &sheetsapi.RowData{Values: []*sheetsapi.CellData{text(strconv.Itoa(d.Row)), text(d.ID), text(d.Column), text(d.Ours), text(d.Before)}})
		}
		reqs = append(reqs,
			&sheetsapi.Request{AddSheet: &sheetsapi.AddSheetRequest{Properties: &sheetsapi.SheetProperties{SheetId: e.id, Title: title,
				GridProperties: &sheetsapi.GridProperties{RowCount: int64(len(rows)), ColumnCount: 5}}}},
			&sheetsapi.Request{UpdateCells: &sheetsapi.UpdateCellsRequest{Start: &sheetsapi.GridCoordinate{SheetId: e.id}, Rows: rows, Fields: "userEnteredValue"}})
		s.mu.Lock()
		if s.damaged == nil {
			s.damaged = map[string]string{}
		}
		s.damaged[tabKey(tab)] = title
		s.mu.Unlock()
	}
	return s.call(ctx, op, func(ctx context.Context) error {
		_, err := s.svc.Spreadsheets.BatchUpdate(s.id, &sheetsapi.BatchUpdateSpreadsheetRequest{Requests: reqs}).Fields("spreadsheetId").Context(ctx).Do()
		return err
	})
}

// keyBlocked returns an error when an edit would write a key cell of a tab that has a damage
// sheet: its keys can't be proven (see the file comment).
func (s *Store) keyBlocked(op string, edits []model.Edit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range edits {
		if _, setsKey := e.Set[model.FKey]; !setsKey {
			continue
		}
		if title, ok := s.damaged[tabKey(e.Tab)]; ok {
			return fmt.Errorf("%s: tab %q has cells an earlier write of triage hit by mistake and could not put back (they are listed in the sheet %q), so no key in it can be proven; set them back, delete that sheet, then try again; nothing was written", op, e.Tab, title)
		}
	}
	return nil
}
