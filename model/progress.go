package model

// RunProgress is a replay run as its progress events tell it: how many calls have an outcome
// of how many, every row's newest state, the rows per state, and the halt. It is the one
// bookkeeping of a run's progress: the TUI's progress view keeps one for the run it shows,
// and `triage serve` keeps one per shared run for the people who watch it. Its zero value is
// an empty run; it is not safe for concurrent use (each keeper guards its own).
type RunProgress struct {
	// Done is how many calls have an outcome (it never goes back: events may be reordered);
	// Total is how many the run plans (the runner's own total once an event reports one).
	Done, Total int
	// Rows is every row's newest state, in the order the rows were planned or first moved.
	Rows []RowResult
	// Counts is how many of Rows are in each state, kept as rows move.
	Counts map[RowState]int
	// Halt is the run's halt: the first an event reported (nil while there is none).
	Halt *Halt

	index map[string]int // Rows by ID
}

// NewRunProgress is the progress of a run of calls before anything moved: each call a row,
// queued, and Total the number of calls.
func NewRunProgress(calls []PlannedCall) RunProgress {
	p := RunProgress{Total: len(calls)}
	for _, c := range calls {
		p.Set(RowResult{ID: c.ID, Row: c.Row, Source: c.Source, URL: c.URL, Key: c.Key, State: StateQueued})
	}
	return p
}

// Apply takes one progress event: the totals, the halt, the row that moved. It returns the
// halt when this event is the one that brought it (a caller puts it on a banner once), else
// nil.
func (p *RunProgress) Apply(ev ReplayEvent) (halt *Halt) {
	if ev.Total > 0 {
		p.Total = ev.Total
	}
	p.Done = max(p.Done, ev.Done)
	if ev.Halted != nil && p.Halt == nil {
		h := *ev.Halted
		p.Halt = &h
		halt = &h
	}
	if ev.Row.ID != "" {
		p.Set(ev.Row)
	}
	return halt
}

// Set records a row's new state, merged into what the row had (MergeRow), and keeps Counts
// in step. A row not seen before is added at the end. It returns the row's index in Rows.
func (p *RunProgress) Set(row RowResult) int {
	if p.index == nil {
		p.index = map[string]int{}
		p.Counts = map[RowState]int{}
	}
	i, ok := p.index[row.ID]
	if !ok {
		i = len(p.Rows)
		p.index[row.ID] = i
		p.Rows = append(p.Rows, RowResult{ID: row.ID})
	}
	old := p.Rows[i]
	p.Rows[i] = MergeRow(old, row)
	if old.State != "" {
		p.Counts[old.State]--
	}
	if s := p.Rows[i].State; s != "" {
		p.Counts[s]++
	}
	return i
}

// Row is the row with this ID, and whether the run has it.
func (p *RunProgress) Row(id string) (RowResult, bool) {
	i, ok := p.index[id]
	if !ok {
		return RowResult{}, false
	}
	return p.Rows[i], true
}

// MergeRow is a row's newest state: ev's fields over old's, an empty field of ev keeping what
// old had (a progress event says only what changed).
func MergeRow(old, ev RowResult) RowResult {
	if ev.ID == "" {
		ev.ID = old.ID
	}
	if ev.Row == 0 {
		ev.Row = old.Row
	}
	if ev.Source == "" {
		ev.Source = old.Source
	}
	if ev.URL == "" {
		ev.URL = old.URL
	}
	if ev.Key == "" {
		ev.Key = old.Key
	}
	if ev.State == "" {
		ev.State = old.State
	}
	if ev.Attempts == 0 {
		ev.Attempts = old.Attempts
	}
	if ev.Detail == "" {
		ev.Detail = old.Detail
	}
	if ev.WriteBack == "" {
		ev.WriteBack = old.WriteBack
	}
	return ev
}
