package emulator

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
)

// checkProtected reports what is wrong with a protected range of sh: an
// index out of the grid, or an empty span.
func checkProtected(sh *sheet, p ProtectedRange) error {
	span := func(what string, start, end, size int) error {
		switch {
		case start < 0 || end < 0:
			return fmt.Errorf("negative %s index", what)
		case end == 0 && start >= size:
			return fmt.Errorf("start%sIndex %d is past the grid (%d)", what, start, size)
		case end != 0 && (end <= start || end > size):
			return fmt.Errorf("%s indexes [%d, %d) are empty or past the grid (%d)", what, start, end, size)
		}
		return nil
	}
	if err := span("Row", p.StartRowIndex, p.EndRowIndex, sh.rowCount); err != nil {
		return err
	}
	return span("Column", p.StartColumnIndex, p.EndColumnIndex, sh.colCount)
}

// checkProtectedAll is check's part for protected ranges: in the grid,
// ids positive and unique in the book.
func (b *book) checkProtectedAll() error {
	ids := map[int64]bool{}
	for i, s := range b.sheets {
		for j, p := range s.protected {
			if p.ProtectedRangeID <= 0 || ids[p.ProtectedRangeID] {
				return fmt.Errorf("sheets[%d] %q: protectedRanges[%d]: bad or duplicate protectedRangeId %d", i, s.title, j, p.ProtectedRangeID)
			}
			ids[p.ProtectedRangeID] = true
			if err := checkProtected(s, p); err != nil {
				return fmt.Errorf("sheets[%d] %q: protectedRanges[%d]: %v", i, s.title, j, err)
			}
		}
	}
	return nil
}

// shiftProtected moves the protected ranges of sh for n rows (or columns)
// inserted before index at (n > 0) or for the rows [at, at-n) deleted
// (n < 0), as Google moves them: a range below or right of the change
// moves with its cells, an insertion inside a range widens it, a deletion
// shrinks it, and a range left empty is removed. A start of 0 is a missing
// index (the Go client never sends a 0), unbounded: it stays 0. size is
// the dimension's size after the change.
func shiftProtected(sh *sheet, rows bool, at, n, size int) {
	if len(sh.protected) == 0 || n == 0 {
		return
	}
	move := func(i int, isEnd bool) int {
		if n > 0 {
			if i > at || (i == at && !isEnd && i > 0) {
				return i + n
			}
			return i
		}
		switch {
		case i <= at:
			return i
		case i <= at-n:
			return at
		}
		return i + n
	}
	kept := sh.protected[:0]
	for _, p := range sh.protected {
		start, end := &p.StartColumnIndex, &p.EndColumnIndex
		if rows {
			start, end = &p.StartRowIndex, &p.EndRowIndex
		}
		*start = move(*start, false)
		if *end != 0 {
			*end = move(*end, true)
			if *end <= *start {
				continue
			}
		} else if *start >= size {
			continue
		}
		kept = append(kept, p)
	}
	sh.protected = kept
}

// addProtectedRange protects a range of a tab. Only the range, its
// description and warningOnly are modelled: editors (beyond an empty list),
// unprotected ranges, named ranges and tables are not emulated (501).
// Protection is recorded and reported, never enforced.
func (b *book) addProtectedRange(raw json.RawMessage) (any, *apiError) {
	var in struct {
		ProtectedRange *struct {
			Range        *gridRange `json:"range"`
			NamedRangeID string     `json:"namedRangeId"`
			TableID      string     `json:"tableId"`
			Description  string     `json:"description"`
			WarningOnly  bool       `json:"warningOnly"`
			Editors      *struct {
				Users              []string `json:"users"`
				Groups             []string `json:"groups"`
				DomainUsersCanEdit bool     `json:"domainUsersCanEdit"`
			} `json:"editors"`
			UnprotectedRanges []json.RawMessage `json:"unprotectedRanges"`
		} `json:"protectedRange"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	p := in.ProtectedRange
	switch {
	case p == nil:
		return nil, badRequest("protectedRange is required")
	case p.NamedRangeID != "" || p.TableID != "":
		return nil, errf(501, "emulator: protected named ranges and tables are not emulated")
	case p.Range == nil:
		return nil, badRequest("protectedRange.range is required")
	case p.WarningOnly && p.Editors != nil && (len(p.Editors.Users) > 0 || len(p.Editors.Groups) > 0):
		return nil, badRequest("Cannot set editors on a warning-only protected range.")
	case p.Editors != nil && (len(p.Editors.Users) > 0 || len(p.Editors.Groups) > 0 || p.Editors.DomainUsersCanEdit):
		return nil, errf(501, "emulator: a protected range's editors are not emulated")
	case len(p.UnprotectedRanges) > 0:
		return nil, errf(501, "emulator: a protected range's unprotectedRanges are not emulated")
	}
	sh, _, err := b.gridSpan(*p.Range)
	if err != nil {
		return nil, err
	}
	g := *p.Range
	pr := ProtectedRange{
		StartRowIndex: deref(g.StartRowIndex, 0), EndRowIndex: deref(g.EndRowIndex, 0),
		StartColumnIndex: deref(g.StartColumnIndex, 0), EndColumnIndex: deref(g.EndColumnIndex, 0),
		Description: p.Description, WarningOnly: p.WarningOnly,
		startRowGiven: g.StartRowIndex != nil, startColumnGiven: g.StartColumnIndex != nil,
	}
	if e := checkProtected(sh, pr); e != nil {
		return nil, badRequest("Invalid protectedRange.range: %v", e)
	}
	for {
		pr.ProtectedRangeID = rand.Int64N(2_000_000_000) + 1
		if !b.protectedIDUsed(pr.ProtectedRangeID) {
			break
		}
	}
	sh.protected = append(sh.protected, pr)
	return map[string]any{"addProtectedRange": map[string]any{"protectedRange": protectedOut(sh, pr)}}, nil
}

func (b *book) protectedIDUsed(id int64) bool {
	for _, s := range b.sheets {
		for _, p := range s.protected {
			if p.ProtectedRangeID == id {
				return true
			}
		}
	}
	return false
}

// protOut is a ProtectedRange as the API answers it. Its editors are answered empty: who may
// edit is the Google accounts', which the emulator has none of.
type protOut struct {
	ProtectedRangeID      int64    `json:"protectedRangeId"`
	Range                 rangeOut `json:"range"`
	Description           string   `json:"description,omitempty"`
	WarningOnly           bool     `json:"warningOnly,omitempty"`
	RequestingUserCanEdit bool     `json:"requestingUserCanEdit"`
	Editors               struct{} `json:"editors"`
}

// rangeOut is a GridRange as Google answers it: a sheet ID of 0 left out (the proto's
// default), a start listed when it was given or isn't 0, an end when bounded.
type rangeOut struct {
	SheetID          int64 `json:"sheetId,omitempty"`
	StartRowIndex    *int  `json:"startRowIndex,omitempty"`
	EndRowIndex      int   `json:"endRowIndex,omitempty"`
	StartColumnIndex *int  `json:"startColumnIndex,omitempty"`
	EndColumnIndex   int   `json:"endColumnIndex,omitempty"`
}

func protectedOut(sh *sheet, p ProtectedRange) protOut {
	start := func(i int, given bool) *int {
		if i == 0 && !given {
			return nil
		}
		return &i
	}
	return protOut{
		ProtectedRangeID: p.ProtectedRangeID,
		Range: rangeOut{SheetID: sh.id, StartRowIndex: start(p.StartRowIndex, p.startRowGiven), EndRowIndex: p.EndRowIndex,
			StartColumnIndex: start(p.StartColumnIndex, p.startColumnGiven), EndColumnIndex: p.EndColumnIndex},
		Description:           p.Description,
		WarningOnly:           p.WarningOnly,
		RequestingUserCanEdit: true,
	}
}

// allHiddenError refuses a change that would leave no tab visible.
func allHiddenError() *apiError {
	return badRequest("You can't hide all the sheets in a document.")
}

// anyVisible reports whether some tab of b is not hidden.
func (b *book) anyVisible() bool {
	for _, s := range b.sheets {
		if !s.tabHidden {
			return true
		}
	}
	return false
}
