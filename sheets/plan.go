package sheets

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/triage-dev/triage/internal/a1"
	"github.com/triage-dev/triage/model"
)

// This file plans one write round (see doc.go): against the tabs as just read, it finds the
// rows of the values of ours still owed back (restores), then locates and verifies every
// undecided edit, and collects one target per row to write.

// cell is a 0-based position in a tab's rows (row 0 = the header row).
type cell struct{ row, col int }

// tabView is one tab as read at the start of a round, plus the writes planned in it.
type tabView struct {
	tc   model.TabConfig
	hm   model.HeaderMap
	rows [][]any
	// text is rows as strings (model.CellString), as the check compares them.
	text   [][]string
	header []string // text[0], trimmed
	// headerDigest is text[0]'s digest (rowDigest), which every target of the tab is checked
	// with.
	headerDigest string
	keys         []string // column keys of the header (see columnKeys)
	ids          map[string][]int
	// pending are the cells to write (what reads of this round see over the read), in
	// first-write order; pendingRaw restores' values with their type (see cellWrite.raw).
	pending    map[cell]string
	order      []cell
	pendingRaw map[cell]any
	// taken are rows a restore of this round already claimed: two rows that read alike get
	// one restore each.
	taken map[int]bool
	// twins caches rows by content outside a set of columns (see twinOf).
	twins map[string]map[string][]int
}

// newTabView maps a tab as read. When its header doesn't map (a required column is missing)
// it returns that error with a view that can only place restores.
func newTabView(tc model.TabConfig, rows [][]any) (*tabView, error) {
	text := make([][]string, len(rows))
	for r, row := range rows {
		text[r] = make([]string, len(row))
		for c, v := range row {
			text[r][c] = model.CellString(v)
		}
	}
	var header []string
	if len(rows) > 0 {
		header = make([]string, len(text[0]))
		for i, v := range text[0] {
			header[i] = strings.TrimSpace(v)
		}
	}
	hm, err := model.MapHeaders(tc, header)
	if err != nil {
		// Rows can't be located by identity, but values of ours can still be found by their
		// content and put back.
		hm = model.HeaderMap{Headers: header, Index: map[model.Field]int{}}
	}
	hd := rowDigest(nil)
	if len(text) > 0 {
		hd = rowDigest(text[0])
	}
	return &tabView{tc: tc, hm: hm, rows: rows, text: text, header: header, headerDigest: hd, keys: columnKeys(header),
		ids: map[string][]int{}, pending: map[cell]string{}, pendingRaw: map[cell]any{}, taken: map[int]bool{}}, err
}

// index records the rows of every wanted identity, as the rows read with this round's
// restores applied: a key of ours still on another row must not make that row look like the
// key's own.
func (t *tabView) index(wanted map[string]bool) {
	t.ids = map[string][]int{}
	width := len(t.hm.Headers)
	for r := 1; r < len(t.rows); r++ {
		cells := make([]string, max(width, len(t.rows[r])))
		empty := true
		for c := range cells {
			cells[c] = t.value(r, c)
			if cells[c] != "" {
				empty = false
			}
		}
		if empty {
			continue
		}
		if id := model.RowIdentity(t.tc, t.hm, cells); id != "" && wanted[id] {
			t.ids[id] = append(t.ids[id], r)
		}
	}
}

// value is a cell's current text: this round's pending write, else what was read.
func (t *tabView) value(row, col int) string {
	if v, ok := t.pending[cell{row, col}]; ok {
		return v
	}
	return t.read(row, col)
}

// read is a cell's text as read, not counting this round's pending writes.
func (t *tabView) read(row, col int) string {
	if row >= 0 && row < len(t.text) {
		return cellAt(t.text[row], col)
	}
	return ""
}

// rawAt is a cell as read, with its type.
func (t *tabView) rawAt(row, col int) any {
	if row >= 0 && row < len(t.rows) {
		return rawAt(t.rows[row], col)
	}
	return nil
}

// put queues a cell to write; raw, when not nil, is the value with its type (a restore).
func (t *tabView) put(row, col int, v string, raw any) {
	c := cell{row, col}
	if _, ok := t.pending[c]; !ok {
		t.order = append(t.order, c)
	}
	t.pending[c] = v
	if raw != nil {
		t.pendingRaw[c] = raw
	} else {
		delete(t.pendingRaw, c)
	}
}

// fieldOf returns the schema field of a column, or "".
func (t *tabView) fieldOf(col int) model.Field {
	for f, c := range t.hm.Index {
		if c == col {
			return f
		}
	}
	return ""
}

func (t *tabView) identityField() model.Field {
	if t.tc.Role == model.RoleDeadLetter {
		return model.FKey
	}
	return model.FID
}

// colOfKey is the column a column key names in this read, or -1.
func (t *tabView) colOfKey(k string) int { return colOfKey(t.keys, k) }

// restore is a value of ours on a row it was not meant for (someone sorted, inserted or
// deleted rows, or changed the row, between our read and our write), owed back.
type restore struct {
	wi int
	// at is the whole row as our write left it, by column key: how it is found again. cols
	// are the columns the tab had then: a column inserted since is someone else's, and
	// whatever they type in it doesn't make the row another.
	at   map[string]string
	cols map[string]bool
	// cells are what is owed, by column key.
	cells map[string]*owedCell
	// ident is the row's identity once put back ("" if it has none): how it is found when
	// someone changed another of its cells since.
	ident string
	// row is where it was last seen (1-based), for messages.
	row int
	// from names the writer whose value it is when this call took it over from another
	// triage's unfinished write (recover.go); "" for this call's own.
	from string
}

// owedCell is one cell of a restore: ours is what our write left (stored as oursKind, see
// cellWrite.kind), before what it held, raw that value with its type.
type owedCell struct {
	header       string
	ours, before string
	oursKind     string
	raw          any
}

// newRestore starts a restore of a row as our write left it (cells positional under keys).
func newRestore(wi int, keys, after []string) *restore {
	rs := &restore{wi: wi, at: contentOf(keys, after), cols: map[string]bool{}, cells: map[string]*owedCell{}}
	for c := range max(len(keys), len(after)) {
		rs.cols[keyAt(keys, c)] = true
	}
	return rs
}

// readsAsLeft reports whether a row reads exactly as our write left it, in the columns the
// tab had then.
func (rs *restore) readsAsLeft(keys, cells []string) bool { return rs.readsAsLeftBut(keys, cells, nil) }

// readsAsLeftBut is readsAsLeft, but for the columns in skip.
func (rs *restore) readsAsLeftBut(keys, cells []string, skip map[string]*owedCell) bool {
	for k := range rs.cols {
		if _, ok := skip[k]; ok {
			continue
		}
		v := ""
		if c := colOfKey(keys, k); c >= 0 {
			v = cellAt(cells, c)
		}
		if v != rs.at[k] {
			return false
		}
	}
	return true
}

// fits reports whether a row (cells positional under keys) is the restore's: it reads as our
// write left it, or it still holds one of our values (a blank is no evidence) and, with the
// owed cells put back, has the restore's identity. The identity only counts where no owed
// cell is one it is read from: putting a key back gives any row that key.
func (rs *restore) fits(tc model.TabConfig, hm model.HeaderMap, keys, cells []string) bool {
	if rs.readsAsLeft(keys, cells) {
		return true
	}
	if rs.ident == "" || rs.decidesIdentity(hm, keys) {
		return false
	}
	back := slices.Clone(cells)
	ours := false
	for k, oc := range rs.cells {
		c := colOfKey(keys, k)
		if c < 0 {
			continue
		}
		for len(back) <= c {
			back = append(back, "")
		}
		if back[c] == oc.ours {
			ours = ours || oc.ours != ""
			back[c] = oc.before
		}
	}
	return ours && model.RowIdentity(tc, hm, back) == rs.ident
}

// decidesIdentity reports whether an owed cell is in a column a row's identity is read from
// (the ID; a dead letter's key, and what a key is taken or minted from).
func (rs *restore) decidesIdentity(hm model.HeaderMap, keys []string) bool {
	for k := range rs.cells {
		c := colOfKey(keys, k)
		for _, f := range []model.Field{model.FID, model.FKey, model.FPayload, model.FSource, model.FURL, model.FTimestamp} {
			if c >= 0 && hm.Col(f) == c {
				return true
			}
		}
	}
	return false
}

// placeRestores finds each owed restore of tab wi in this read and queues its cells: first
// the rows that read exactly as our write left them, then by identity. A cell someone wrote
// since (it no longer holds our value) or whose column is gone is dropped: their change
// stands. It returns the restores placed (by row) and those settled without a write (their
// row is gone, or nothing of ours is left on it); the rest are not found this round.
func (t *tabView) placeRestores(owed []*restore) (placed map[int][]*restore, settled, unplaced []*restore) {
	placed = map[int][]*restore{}
	place := func(rs *restore, r int) {
		t.taken[r] = true
		any := false
		for k, oc := range rs.cells {
			c := t.colOfKey(k)
			if c < 0 || t.read(r, c) != oc.ours || kindOf(t.rawAt(r, c)) != oc.oursKind {
				// Someone wrote the cell since (or took its column away): their value stands.
				delete(rs.cells, k)
				continue
			}
			t.put(r, c, oc.before, oc.raw)
			any = true
		}
		rs.row = r + 1
		if any {
			placed[r] = append(placed[r], rs)
		} else {
			settled = append(settled, rs)
		}
	}
	var second []*restore
	for _, rs := range owed {
		found := -1
		for r := 1; r < len(t.text); r++ {
			if !t.taken[r] && rs.readsAsLeft(t.keys, t.text[r]) {
				found = r
				break
			}
		}
		if found >= 0 {
			place(rs, found)
		} else {
			second = append(second, rs)
		}
	}
	for _, rs := range second {
		// The row as our write left it but for the owed cells: someone wrote over some of
		// them since (their value stands); what still holds ours is put back.
		var found []int
		for r := 1; r < len(t.text); r++ {
			if !t.taken[r] && rs.readsAsLeftBut(t.keys, t.text[r], rs.cells) {
				found = append(found, r)
			}
		}
		if len(found) == 0 && rs.ident != "" {
			// Someone changed another of its cells: by identity, where our values still are.
			for r := 1; r < len(t.text); r++ {
				if !t.taken[r] && rs.fits(t.tc, t.hm, t.keys, t.text[r]) {
					found = append(found, r)
				}
			}
		}
		switch len(found) {
		case 1:
			place(rs, found[0])
		case 0:
			// No row reads like it outside the owed cells, and none has its identity with
			// our values: it was deleted (and what we left on it with it).
			settled = append(settled, rs)
		default:
			unplaced = append(unplaced, rs)
		}
	}
	return placed, settled, unplaced
}

// apply locates and verifies one edit and queues its writes. Exactly one of applied,
// conflict and missing is set; write says the edit queued cells to write (an applied edit
// that doesn't was found already written).
func (t *tabView) apply(e model.Edit, actor, now string) (applied *model.Applied, conflict *model.Conflict, missing, write bool) {
	if e.ID == "" {
		return nil, nil, true, false
	}
	found := t.ids[e.ID]
	switch len(found) {
	case 0:
		return nil, nil, true, false
	case 1:
	default:
		rows := make([]string, len(found))
		for i, r := range found {
			rows[i] = strconv.Itoa(r + 1)
		}
		return nil, &model.Conflict{Edit: e, Row: found[0] + 1, Field: t.identityField(), Saw: e.ID,
			Reason: fmt.Sprintf("the same ID is on rows %s (make it unique, then retry)", strings.Join(rows, ", "))}, false, false
	}
	row := found[0]
	if c := t.expectConflict(e, row); c != nil {
		return nil, c, false, false
	}
	changes, c := t.setConflict(e, row)
	if c != nil {
		return nil, c, false, false
	}
	if !changes {
		// Nothing to write: the row already holds what the edit sets.
		return &model.Applied{Edit: e, Row: row + 1}, nil, false, false
	}
	if _, setsKey := e.Set[model.FKey]; setsKey && t.tc.Role == model.RoleDeadLetter {
		// A row that reads the same but for the cells this edit writes (a dead letter copied
		// without its key) has the same minted key: writing it on one leaves the other
		// minting the same key, and the two can't be told apart by anyone.
		if twin := t.twinOf(row, e.Set); twin >= 0 {
			return nil, &model.Conflict{Edit: e, Row: row + 1, Field: model.FKey, Saw: e.Expect[model.FKey], Now: t.value(row, t.hm.Col(model.FKey)),
				Reason: fmt.Sprintf("row %d reads the same but for the cells this edit writes, so the two rows can't be told apart (make them differ, then retry)", twin+1)}, false, false
		}
	}
	for _, f := range sortedFields(e.Set) {
		t.put(row, t.hm.Col(f), e.Set[f], nil)
	}
	if c := t.hm.Col(model.FTriagedBy); c >= 0 && actor != "" {
		if _, explicit := e.Set[model.FTriagedBy]; !explicit {
			t.put(row, c, actor, nil)
		}
	}
	if c := t.hm.Col(model.FTriagedAt); c >= 0 {
		if _, explicit := e.Set[model.FTriagedAt]; !explicit {
			t.put(row, c, now, nil)
		}
	}
	return &model.Applied{Edit: e, Row: row + 1}, nil, false, true
}

// expectConflict checks an edit's Expect against its row (with this round's pending writes).
func (t *tabView) expectConflict(e model.Edit, row int) *model.Conflict {
	for _, f := range sortedFields(e.Expect) {
		want := e.Expect[f]
		col := t.hm.Col(f)
		if col < 0 {
			if want != "" {
				return &model.Conflict{Edit: e, Row: row + 1, Field: f, Saw: want, Reason: fmt.Sprintf("column %s is no longer in the tab", f)}
			}
			continue
		}
		if now := t.value(row, col); now != want {
			return &model.Conflict{Edit: e, Row: row + 1, Field: f, Saw: want, Now: now}
		}
	}
	return nil
}

// setConflict checks that an edit's Set can be written in its row, and says whether it
// changes anything. Invariant 3: a key cell that holds a value is never written.
func (t *tabView) setConflict(e model.Edit, row int) (changes bool, c *model.Conflict) {
	for _, f := range sortedFields(e.Set) {
		col := t.hm.Col(f)
		if col < 0 {
			return false, &model.Conflict{Edit: e, Row: row + 1, Field: f, Saw: e.Expect[f], Reason: fmt.Sprintf("the tab has no %s column (add it or map it in config)", f)}
		}
		cur := t.value(row, col)
		if f == model.FKey && t.tc.Role == model.RoleDeadLetter && strings.TrimSpace(cur) != "" && cur != e.Set[f] {
			return false, &model.Conflict{Edit: e, Row: row + 1, Field: f, Saw: e.Expect[f], Now: cur,
				Reason: fmt.Sprintf("the key cell already holds %q, and a call's key never changes (invariant 3)", cur)}
		}
		if cur != e.Set[f] {
			changes = true
		}
	}
	return changes, nil
}

// twinOf returns another row (0-based) that reads as row does, as read, in every column but
// those of set and the audit columns, or -1.
func (t *tabView) twinOf(row int, set map[model.Field]string) int {
	var skip []int
	for _, f := range append(sortedFields(set), model.FTriagedBy, model.FTriagedAt) {
		if c := t.hm.Col(f); c >= 0 {
			skip = append(skip, c)
		}
	}
	sort.Ints(skip)
	name := fmt.Sprint(skip)
	if t.twins == nil {
		t.twins = map[string]map[string][]int{}
	}
	sig := func(r int) string {
		var b strings.Builder
		for c, v := range t.text[r] {
			if v != "" && !slices.Contains(skip, c) {
				fmt.Fprintf(&b, "%d=%q;", c, v)
			}
		}
		return b.String()
	}
	rowsBy := t.twins[name]
	if rowsBy == nil {
		// Rows by what they read outside those columns, once per set of columns.
		rowsBy = map[string][]int{}
		for r := 1; r < len(t.text); r++ {
			rowsBy[sig(r)] = append(rowsBy[sig(r)], r)
		}
		t.twins[name] = rowsBy
	}
	for _, r := range rowsBy[sig(row)] {
		if r != row {
			return r
		}
	}
	return -1
}

func sortedFields(m map[model.Field]string) []model.Field {
	return slices.Sorted(maps.Keys(m))
}

// columnKeys names each column of a header row: its trimmed, lower-cased header when that is
// set and unique in the row, else its position ("#4"). Rows are compared by these names, so
// a column moved between two reads is still compared with itself.
func columnKeys(header []string) []string {
	keys := make([]string, len(header))
	seen := map[string]int{}
	for i, h := range header {
		k := strings.ToLower(strings.TrimSpace(h))
		keys[i] = k
		if k != "" {
			seen[k]++
		}
	}
	for i, k := range keys {
		if k == "" || seen[k] > 1 {
			keys[i] = "#" + strconv.Itoa(i)
		}
	}
	return keys
}

// keyAt is the column key of column c (past the header: its position).
func keyAt(keys []string, c int) string {
	if c >= 0 && c < len(keys) {
		return keys[c]
	}
	return "#" + strconv.Itoa(c)
}

// colOfKey is the column a column key names under keys, or -1.
func colOfKey(keys []string, k string) int {
	if i := slices.Index(keys, k); i >= 0 {
		return i
	}
	if n, ok := strings.CutPrefix(k, "#"); ok {
		if c, err := strconv.Atoi(n); err == nil && c >= len(keys) {
			return c
		}
	}
	return -1
}

// headerAt names column c for a message: its header, else its letter.
func headerAt(header []string, c int) string {
	if c >= 0 && c < len(header) && strings.TrimSpace(header[c]) != "" {
		return strconv.Quote(strings.TrimSpace(header[c]))
	}
	return a1.ColumnLetter(c)
}

func cellAt(row []string, c int) string {
	if c >= 0 && c < len(row) {
		return row[c]
	}
	return ""
}

func rawAt(row []any, c int) any {
	if c >= 0 && c < len(row) {
		return row[c]
	}
	return nil
}

// contentOf is a row by column key, empty cells left out.
func contentOf(keys []string, row []string) map[string]string {
	m := make(map[string]string, len(row))
	for c, v := range row {
		if v != "" {
			m[keyAt(keys, c)] = v
		}
	}
	return m
}

// sameCells reports whether two rows hold the same text in every column (trailing empty
// cells don't count: Sheets leaves them out).
func sameCells(a, b []string) bool {
	for i := range max(len(a), len(b)) {
		if cellAt(a, i) != cellAt(b, i) {
			return false
		}
	}
	return true
}
