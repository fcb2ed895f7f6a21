package tui

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/triage-dev/triage/model"
)

// colKind says how a column turns a record into text.
type colKind uint8

const (
	kindText      colKind = iota // the cell, on one line
	kindFirstLine                // the first line of the cell (messages)
	kindStatus                   // the record's normalised status, styled by meaning
	kindAge                      // the record's parsed time, as an age
	kindNumber                   // the cell, right-aligned
	kindTime                     // a time cell other than the record's own time, as an age
	kindURL                      // a URL without its scheme, elided in the middle (shortURL)
	kindKey                      // the record's identity (r.ID), elided in the middle; a minted key marked
)

// column is one table column of a role. Widths are in cells.
//
// A bounded column (share 0: ages, statuses, names, keys) gets its natural width: the widest
// value, capped at max. A free-text column (share > 0: messages, errors, payloads) gets want
// cells, and whatever the bounded columns leave is split between the free-text columns by
// share, so the most important one gets the most. When the terminal is too narrow, bounded
// columns give way down to min (the least important first), then columns are hidden in drop
// order, and only then does free text shrink below want (down to min).
type column struct {
	title    string
	field    model.Field
	kind     colKind
	min, max int
	share    int
	want     int
	// drop orders the columns to hide when even their minimum widths don't fit (1 first);
	// 0 never hides.
	drop int
	// cell is the sheet column an extra column (one the config's table list names that no
	// field of the role is) shows, when extra is set; others show their field's.
	cell  int
	extra bool
}

// raw is the cell a column shows for a record, as the sheet holds it.
func (c *column) raw(t *model.Table, r *model.Record) string {
	if c.extra {
		if c.cell >= 0 && c.cell < len(r.Cells) {
			return r.Cells[c.cell]
		}
		return ""
	}
	return t.Get(r, c.field)
}

// flex reports whether a column is free text (takes a share of the spare width).
func (c *column) flex() bool { return c.share > 0 }

// always reports whether a column is shown whatever the tab's headers: the status (blank
// reads as the default) and the dead-letter key (the effective key exists for every row).
func (c *column) always() bool { return c.kind == kindStatus || c.kind == kindKey }

// roleColumns lists the columns a role shows, in order. Columns the tab lacks are left out.
func roleColumns(t *model.Table) []column {
	var all []column
	switch t.Config.Role {
	case model.RoleInbox:
		all = []column{
			{title: "AGE", field: model.FTimestamp, kind: kindAge, min: 3, max: 6, drop: 3},
			{title: "NAME", field: model.FName, kind: kindText, min: 10, max: 18, drop: 4},
			{title: "EMAIL", field: model.FEmail, kind: kindText, min: 14, max: 24, drop: 2},
			{title: "STATUS", field: model.FStatus, kind: kindStatus, min: 9, max: 9},
			{title: "MESSAGE", field: model.FMessage, kind: kindFirstLine, min: 12, share: 1, want: 30},
		}
	case model.RoleDeadLetter:
		all = []column{
			// The key is what `triage replay KEY` takes: shown at every width.
			{title: "KEY", field: model.FKey, kind: kindKey, min: 10, max: 14},
			{title: "SOURCE", field: model.FSource, kind: kindText, min: 8, max: 14, drop: 5},
			{title: "URL", field: model.FURL, kind: kindURL, min: 22, max: 32, drop: 3},
			{title: "ERROR", field: model.FError, kind: kindFirstLine, min: 12, share: 2, want: 24},
			{title: "PAYLOAD", field: model.FPayload, kind: kindFirstLine, min: 12, share: 1, want: 24, drop: 1},
			{title: "TRIES", field: model.FAttempts, kind: kindNumber, min: 5, max: 5, drop: 2},
			{title: "STATUS", field: model.FStatus, kind: kindStatus, min: 9, max: 9},
			{title: "AGE", field: model.FTimestamp, kind: kindAge, min: 3, max: 6, drop: 4},
		}
	case model.RoleQueue:
		all = []column{
			{title: "ID", field: model.FID, kind: kindText, min: 8, max: 14},
			// A type cut short ("send-…") says nothing: it keeps its width and is hidden late.
			{title: "TYPE", field: model.FType, kind: kindText, min: 12, max: 16, drop: 6},
			{title: "PAYLOAD", field: model.FPayload, kind: kindFirstLine, min: 12, share: 1, want: 20, drop: 1},
			{title: "STATUS", field: model.FStatus, kind: kindStatus, min: 9, max: 9},
			{title: "WORKER", field: model.FClaimedBy, kind: kindText, min: 8, max: 14, drop: 4},
			// A stale claim reads "stale 2h": the word survives NO_COLOR and TERM=dumb.
			{title: "CLAIMED", field: model.FClaimedAt, kind: kindAge, min: 9, max: 12, drop: 5},
			{title: "LAST ERROR", field: model.FLastError, kind: kindFirstLine, min: 10, share: 2, want: 16},
			{title: "UPDATED", field: model.FUpdatedAt, kind: kindTime, min: 7, max: 7, drop: 2},
			{title: "TRIES", field: model.FAttempts, kind: kindNumber, min: 5, max: 5, drop: 3},
		}
	}
	cols := all[:0:0]
	for _, c := range all {
		if c.always() || t.Header.Has(c.field) {
			cols = append(cols, c)
		}
	}
	if len(t.Config.TableColumns) > 0 {
		cols, _ = chosenColumns(t, cols, t.Config.TableColumns)
	}
	return cols
}

// chosenColumns are the columns the config's table list names ([tabs.ROLE] table = [...]),
// in its order: a column of the role by its title or its field ("AGE", "message", "claimedAt"),
// or any other of the sheet's columns by its header ("Phone"), shown as text. unknown are the
// names that are none of these (the tab lacks them): left out.
func chosenColumns(t *model.Table, role []column, names []string) (cols []column, unknown []string) {
	for _, name := range names {
		n := strings.TrimSpace(name)
		i := slices.IndexFunc(role, func(c column) bool {
			return strings.EqualFold(c.title, n) || strings.EqualFold(string(c.field), strings.ReplaceAll(n, "_", ""))
		})
		if i >= 0 {
			cols = append(cols, role[i])
			continue
		}
		j := slices.IndexFunc(t.Header.Headers, func(h string) bool { return model.NormHeader(h) == model.NormHeader(n) })
		if j < 0 {
			unknown = append(unknown, n)
			continue
		}
		cols = append(cols, column{title: strings.ToUpper(cellLine(t.Header.Headers[j])), kind: kindText, min: 6, max: 24, drop: 1, cell: j, extra: true})
	}
	return cols, unknown
}

// wideColumns is every column of the sheet for the wide view (ctrl+w), in the sheet's order:
// the role's columns where their fields are, each other column as text; none is capped, so
// cells show whole (long text up to wideTextMax cells), and the table scrolls sideways.
func wideColumns(t *model.Table) []column {
	role := roleColumns(&model.Table{Config: model.TabConfig{Role: t.Config.Role}, Header: t.Header})
	var cols []column
	keyShown := false
	for j, h := range t.Header.Headers {
		if strings.TrimSpace(h) == "" {
			continue
		}
		c := column{title: strings.ToUpper(cellLine(h)), kind: kindText, cell: j, extra: true}
		if i := slices.IndexFunc(role, func(c column) bool { return t.Header.Col(c.field) == j }); i >= 0 {
			c = role[i]
			keyShown = keyShown || c.kind == kindKey
		}
		c.share, c.want, c.drop, c.min = 0, 0, 0, 1
		c.max = wideTextMax
		cols = append(cols, c)
	}
	// A dead letter's key is shown even when it isn't in a column of its own (the payload's
	// key field, or minted): it is what `triage replay KEY` takes.
	if i := slices.IndexFunc(role, func(c column) bool { return c.kind == kindKey }); i >= 0 && !keyShown {
		k := role[i]
		k.drop, k.min, k.max = 0, 1, wideTextMax
		cols = append([]column{k}, cols...)
	}
	return cols
}

// wideTextMax is how wide a cell grows in the wide view: long text is shown whole up to it.
const wideTextMax = 120

// cellText is what a column shows for a record, sanitised, before fitting.
func cellText(t *model.Table, r *model.Record, c *column, now time.Time) string {
	switch c.kind {
	case kindStatus:
		return cellLine(r.Status)
	case kindAge:
		a := age(now, inZone(r.Time, t.Location))
		if t.Stale(r, now) {
			// A stale claim needs a person; the word survives NO_COLOR.
			a = "stale " + a
		}
		return a
	case kindTime:
		if tm, ok := model.ParseTime(c.raw(t, r), t.Location); ok {
			return age(now, inZone(tm, t.Location))
		}
		return cellLine(c.raw(t, r))
	case kindFirstLine:
		return firstLine(c.raw(t, r))
	case kindURL:
		return stripScheme(cellLine(c.raw(t, r)))
	case kindKey:
		return keyText(r)
	}
	return cellLine(c.raw(t, r))
}

// fitCell fits a column's text to cw cells: numbers and ages right-aligned, URLs and keys
// elided in the middle (their ends tell them apart), the rest cut at the end.
func fitCell(c *column, text string, cw int) string {
	switch c.kind {
	case kindNumber, kindAge, kindTime:
		return fitRight(text, cw)
	case kindURL:
		return fit(shortURL(text, cw), cw)
	case kindKey:
		return fit(shortKey(text, cw), cw)
	}
	return fit(text, cw)
}

// mintedMark follows a minted key: it is not in the sheet until the first replay writes it.
// Not "*", which marks a marked row; the help's Markers group says what each one means.
const mintedMark = "~"

// keyText is a dead-letter row's effective key as the KEY column shows it, sanitised; a minted
// key (not written to the sheet yet) is marked.
func keyText(r *model.Record) string {
	k := cellLine(r.ID)
	if r.KeyOrigin == model.KeyMinted && k != "" {
		k += mintedMark
	}
	return k
}

// shortKey fits a key into w cells by eliding its middle ("crm-e…2041"): keys share prefixes
// and differ at the end. The minted mark stays.
func shortKey(k string, w int) string {
	if textWidth(k) <= w {
		return k
	}
	if strings.HasSuffix(k, mintedMark) && w > 2 {
		return elideMiddle(strings.TrimSuffix(k, mintedMark), w-1) + mintedMark
	}
	return elideMiddle(k, w)
}

// elideMiddle cuts s (sanitised) to w cells by replacing its middle with "…".
func elideMiddle(s string, w int) string {
	if textWidth(s) <= w {
		return s
	}
	if w < 3 {
		return truncate(s, w)
	}
	tail := (w - 1) / 2
	return firstCells(s, w-1-tail) + "…" + lastCells(s, tail)
}

// firstCells is the start of s that fits in w cells (whole grapheme clusters).
func firstCells(s string, w int) string {
	if isPrintableASCII(s) {
		return s[:min(len(s), w)]
	}
	return ansi.Truncate(s, w, "")
}

// lastCells is the end of s that fits in w cells (whole grapheme clusters).
func lastCells(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if isPrintableASCII(s) {
		if len(s) <= w {
			return s
		}
		return s[len(s)-w:]
	}
	return ansi.TruncateLeft(s, max(0, textWidth(s)-w), "")
}

// stripScheme drops a URL's scheme ("https://") and userinfo: on a line of dead letters the
// scheme is noise, and credentials never belong on screen.
func stripScheme(u string) string {
	if i := strings.Index(u, "://"); i > 0 && isScheme(u[:i]) {
		u = u[i+3:]
	}
	host := u
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		host = u[:i]
	}
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		u = u[at+1:]
	}
	return u
}

func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// shortURL fits a URL (already sanitised and without its scheme) into w cells by what tells
// it apart: the host[:port] always, then the last path segments, then as much of the start of
// the path as fits, the middle elided ("127.0.0.1:4431/v1/…/hooks/crm"). A host too long for
// w is cut at its end; so is a URL whose last segment alone doesn't fit.
func shortURL(u string, w int) string {
	if textWidth(u) <= w {
		return u
	}
	cut := strings.IndexByte(u, '/')
	if cut < 0 {
		return truncate(u, w)
	}
	host, path := u[:cut], u[cut:]
	room := w - textWidth(host) - textWidth("/…")
	segs := strings.Split(path[1:], "/")
	if room <= 0 || len(segs) < 2 {
		return truncate(u, w)
	}
	// The longest suffix of whole segments that fits.
	suffix, n := "", 0
	for i := len(segs) - 1; i >= 1; i-- {
		s := "/" + segs[i]
		if textWidth(s)+textWidth(suffix) > room {
			break
		}
		suffix, n = s+suffix, n+1
	}
	if n == 0 {
		return truncate(u, w)
	}
	// Then whole leading segments while they fit.
	room -= textWidth(suffix)
	head := ""
	for i := 0; i < len(segs)-n; i++ {
		s := "/" + segs[i]
		if textWidth(s)+textWidth(head) > room {
			break
		}
		head += s
	}
	return host + head + "/…" + suffix
}

// naturalText is the text a bounded column is measured by.
func naturalText(t *model.Table, r *model.Record, c *column) string {
	switch c.kind {
	case kindStatus:
		return r.Status
	case kindKey:
		return keyText(r)
	case kindURL:
		return stripScheme(cellLine(c.raw(t, r)))
	}
	return cellLine(c.raw(t, r))
}

// naturalWidths measures each column over every record, once per load (in the load Cmd, off
// the UI goroutine). Ages are measured at layout time (ageWidth): they change with the clock.
func naturalWidths(t *model.Table, cols []column) []int {
	nat := make([]int, len(cols))
	for i := range cols {
		c := &cols[i]
		w := textWidth(c.title)
		switch {
		case c.flex():
			// Free text takes what is left; measuring it is wasted work.
			w = max(w, c.want)
		case c.kind == kindAge || c.kind == kindTime:
		default:
			for ri := range t.Records {
				if w >= c.max {
					break
				}
				if vw := textWidth(naturalText(t, &t.Records[ri], c)); vw > w {
					w = vw
				}
			}
		}
		if c.max > 0 && w > c.max {
			w = c.max
		}
		nat[i] = w
	}
	return nat
}

// oldestTime is the oldest record time of a table (zero when none has one): whether an age
// can read "Jan 02" (6 cells) rather than "59d" (3).
func oldestTime(t *model.Table) time.Time {
	var old time.Time
	for i := range t.Records {
		if tm := t.Records[i].Time; !tm.IsZero() && (old.IsZero() || tm.Before(old)) {
			old = tm
		}
	}
	return old
}

// ageWidth is the widest age the tab's own times read at now: "59d" until one is 60 days
// old, then "Jan 02". A queue's claim age has room for "stale ".
func (d *tabData) ageWidth(now time.Time) int {
	w := 3
	if !d.oldest.IsZero() && now.Sub(d.oldest) >= 59*24*time.Hour {
		w = 6
	}
	if d.table.Config.Role == model.RoleQueue {
		w += len("stale ")
	}
	return w
}

// widen is told about a changed record: it drops the cached sort orders and grows the
// natural widths of the columns the record no longer fits (a status or a worker longer than
// any the load measured). Widths never shrink until the next load:
// measuring every row again per edit would cost O(rows).
func (d *tabData) widen(r *model.Record) (grew bool) {
	d.sorted = nil // the record's sort keys may have changed
	for i := range d.cols {
		c := &d.cols[i]
		if c.flex() || c.kind == kindAge || c.kind == kindTime || (c.max > 0 && d.natural[i] >= c.max) {
			continue
		}
		w := textWidth(naturalText(d.table, r, c))
		if c.max > 0 {
			w = min(w, c.max)
		}
		if w > d.natural[i] {
			d.natural[i], grew = w, true
		}
	}
	return grew
}

// gutterWidth is the cursor / mark / problem marker cells left of the first column.
const gutterWidth = 3

// smallOverflow is how many cells too wide a layout may be and still be fitted by cutting
// bounded columns, whatever their importance, rather than by hiding one: hiding the age to
// save one cell of a name costs more than it gives.
const smallOverflow = 4

// layout fits the columns into a width (see column): bounded columns at their natural width,
// free text at its want. Too wide, it narrows bounded columns toward their minimum as long as
// they matter no more than the next column to hide (or the overflow is small); if that is not
// enough it hides that column (drop order) and lays the rest out afresh; free text shrinks
// below its want only when nothing is left to hide. What is left over is shared by the
// free-text columns by share (with none, the last column takes it). It returns the width of
// each column, 0 for a hidden one.
func layout(cols []column, natural []int, width int) []int {
	ws := make([]int, len(cols))
	hidden := make([]bool, len(cols))
	for {
		visible := 0
		for i := range cols {
			ws[i] = 0
			if !hidden[i] {
				visible++
				ws[i] = natural[i]
				if cols[i].flex() {
					ws[i] = cols[i].want
				}
			}
		}
		if visible == 0 {
			return ws
		}
		avail := width - gutterWidth - (visible - 1)
		used := 0
		for _, w := range ws {
			used += w
		}
		drop := nextDrop(cols, hidden)
		used = shrinkTo(cols, natural, hidden, ws, used, avail, drop)
		if used <= avail {
			share(cols, hidden, ws, avail-used)
			return ws
		}
		if drop >= 0 {
			hidden[drop] = true
			continue
		}
		// Nothing left to hide: free text gives way too, down to its minimum.
		for i := range cols {
			if !hidden[i] && cols[i].flex() && used > avail {
				cut := min(used-avail, ws[i]-cols[i].min)
				ws[i] -= cut
				used -= cut
			}
		}
		if used > avail {
			// Narrower than every minimum: the first free text keeps a cell.
			for i := range cols {
				if !hidden[i] && cols[i].flex() {
					ws[i] = max(1, ws[i]-(used-avail))
					break
				}
			}
		}
		return ws
	}
}

// floor is the narrowest a bounded column gets: its minimum, or its natural width when that
// is less (a column of short values never pads itself to its minimum).
func floor(c *column, natural int) int { return min(c.min, natural) }

// shrinkTo narrows shown bounded columns toward their floor, the least important first, until
// they use at most limit cells. Only columns that matter no more than drop (the column that
// would be hidden next; -1 none) are cut, unless the whole overflow is small and can be cut.
// It returns the width used.
func shrinkTo(cols []column, natural []int, hidden []bool, ws []int, used, limit, drop int) int {
	over := used - limit
	if over <= 0 {
		return used
	}
	slack := 0
	for i := range cols {
		if !hidden[i] && !cols[i].flex() {
			slack += ws[i] - floor(&cols[i], natural[i])
		}
	}
	for over > 0 {
		anyColumn := drop < 0 || (over <= smallOverflow && over <= slack)
		best := -1
		for i := range cols {
			c := &cols[i]
			if hidden[i] || c.flex() || ws[i] <= floor(c, natural[i]) {
				continue
			}
			if !anyColumn && i != drop && lessImportant(&cols[drop], c) {
				continue // hiding drop comes first
			}
			if best < 0 || lessImportant(c, &cols[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		cut := min(over, ws[best]-floor(&cols[best], natural[best]))
		ws[best] -= cut
		over -= cut
		slack -= cut
	}
	return limit + over
}

// lessImportant reports whether a gives way before b: the column hidden first is the least
// important; a column never hidden is the most.
func lessImportant(a, b *column) bool {
	ra, rb := a.drop, b.drop
	if ra == 0 {
		ra = 1 << 30
	}
	if rb == 0 {
		rb = 1 << 30
	}
	if ra != rb {
		return ra < rb
	}
	return a.share < b.share
}

// share hands the spare cells to the shown free-text columns by their share (the remainder
// to the one with the biggest share); without free text, the last shown column takes them.
func share(cols []column, hidden []bool, ws []int, spare int) {
	if spare <= 0 {
		return
	}
	total, best, last := 0, -1, -1
	for i := range cols {
		if hidden[i] {
			continue
		}
		last = i
		if s := cols[i].share; s > 0 {
			total += s
			if best < 0 || s > cols[best].share {
				best = i
			}
		}
	}
	if total == 0 {
		ws[last] += spare
		return
	}
	given := 0
	for i := range cols {
		if !hidden[i] && cols[i].share > 0 {
			g := spare * cols[i].share / total
			ws[i] += g
			given += g
		}
	}
	ws[best] += spare - given
}

// nextDrop is the shown column to hide next (lowest drop rank above 0), -1 if none can go.
func nextDrop(cols []column, hidden []bool) int {
	drop, rank := -1, 0
	for i, c := range cols {
		if !hidden[i] && c.drop > 0 && (drop < 0 || c.drop < rank) {
			drop, rank = i, c.drop
		}
	}
	return drop
}

// itoa avoids fmt in the per-row path.
func itoa(n int) string { return strconv.Itoa(n) }
