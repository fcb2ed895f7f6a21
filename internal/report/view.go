package report

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/triage-dev/triage/model"
)

// view is a Run made ready to render: every text scrubbed, sanitised and capped (but not yet
// escaped, which is each format's job), every link built here.
type view struct {
	Title       string
	Tab         string
	Spreadsheet string
	// Store is where the run wrote: "the sheet", or the database by its (redacted) URL.
	Store         string
	TabLink       string
	Started       string
	Ended         string
	Duration      string
	Rate          string
	Outcome       string
	ExitCode      int
	Halted        bool
	Halt          haltView
	Cancelled     bool
	NotAttempted  int
	Selected      int
	NotDoneCount  int
	Cards         [][]statCard  // rows of cards (a mail client lays out a table, not a grid)
	NotDone       []rowView     // Run.NotDoneRows: NotDoneCount is its length
	Skipped       []refusalView // skipped by rule and done (a sticky row named by ID is in NotDone)
	WriteBack     []string
	WriteRequests int
	Settings      settingsView
}

// statCard is one stat card; Bad paints it red.
type statCard struct {
	Label, Value string
	Bad          bool
}

type haltView struct{ Cause, Source, Detail string }

type rowView struct {
	Row      int
	Link     string
	ID       string
	Source   string
	State    string
	Error    string
	Attempts int
}

type refusalView struct {
	Row    int
	Link   string
	ID     string
	Reason string
}

type settingsView struct {
	Selection    string
	SourceFilter string
	Concurrency  string
	Force        bool
	Sources      []sourceView
}

type sourceView struct {
	Name, Preset                  string
	URLPrefixes, RedirectPrefixes []string
	Headers                       []string
	Rate, Attempts, Timeout       string
}

// Caps on shown text: enough to read, never a payload.
const (
	capID     = 80
	capDetail = 400
	capName   = 120
)

// cardsPerRow is how many stat cards share a table row.
const cardsPerRow = 5

// timeLayout shows a time with its offset, so a reader in another zone is not misled.
const timeLayout = "2006-01-02 15:04:05 -0700"

// text is the one path every shown string takes: secrets scrubbed (before anything changes
// the text they would be found in), terminal controls and bidi overrides made visible, one
// line, capped to max characters.
func (r *Run) text(s string, max int) string {
	return capText(model.SanitizeLine(r.scrub(s)), max)
}

// scrub replaces every secret value in s with <redacted>, longest first so a secret that
// contains another is replaced whole.
func (r *Run) scrub(s string) string {
	if len(r.Secrets) == 0 {
		return s
	}
	secs := append([]string(nil), r.Secrets...)
	sort.Slice(secs, func(i, j int) bool { return len(secs[i]) > len(secs[j]) })
	for _, v := range secs {
		if len(v) >= minSecret {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}

// capText shortens s to max characters, saying how long it was.
func capText(s string, max int) string {
	if n := utf8.RuneCountInString(s); n > max {
		return string([]rune(s)[:max]) + fmt.Sprintf("…(%d chars)", n)
	}
	return s
}

func (r *Run) view() *view {
	v := &view{
		Tab:           r.text(r.Tab, capName),
		Spreadsheet:   r.text(r.SpreadsheetID, capName),
		Store:         "the sheet",
		TabLink:       r.RowLink(1),
		Duration:      "–",
		Rate:          r.Rate(),
		Outcome:       r.Outcome(),
		ExitCode:      r.ExitCode,
		Cancelled:     r.Summary.Cancelled,
		NotAttempted:  len(r.Summary.NotAttempted),
		Selected:      r.Selected,
		WriteRequests: r.Summary.WriteRequests,
	}
	v.Title = "triage replay of " + v.Tab + ": " + v.Outcome
	if !r.Started.IsZero() {
		v.Started = r.Started.Format(timeLayout)
	}
	if !r.Ended.IsZero() {
		v.Ended = r.Ended.Format(timeLayout)
	}
	if d := r.Duration(); d >= time.Second {
		v.Duration = d.Round(100 * time.Millisecond).String()
	} else if d > 0 {
		v.Duration = d.Round(time.Millisecond).String()
	}
	for _, nd := range r.NotDoneRows() {
		v.NotDone = append(v.NotDone, rowView{Row: nd.Row, Link: r.RowLink(nd.Row), ID: r.text(nd.ID, capID),
			Source: r.text(nd.Source, capName), State: r.text(nd.Label, capName), Error: r.text(nd.Detail, capDetail), Attempts: nd.Attempts})
	}
	v.NotDoneCount = len(v.NotDone)
	if h := r.Summary.Halted; h != nil {
		v.Halted = true
		v.Halt = haltView{Cause: r.text(h.Cause, capName), Source: r.text(h.Source, capName), Detail: r.text(h.Detail, capDetail)}
	}
	state := statCard{Label: "outcome", Value: "done"}
	switch {
	case v.Halted:
		state = statCard{Label: "halted: " + v.Halt.Cause, Value: "HALTED", Bad: true}
	case v.Cancelled:
		state = statCard{Label: "run", Value: "interrupted", Bad: true}
	case v.NotDoneCount > 0 || v.ExitCode != 0:
		state = statCard{Label: "outcome", Value: "not done", Bad: true}
	}
	v.Cards = append(v.Cards, []statCard{state,
		{Label: "not done", Value: fmt.Sprint(v.NotDoneCount), Bad: v.NotDoneCount > 0},
		{Label: "selected", Value: fmt.Sprint(v.Selected)},
		{Label: "duration", Value: v.Duration},
		{Label: "throughput", Value: v.Rate}})
	var cards []statCard
	for _, c := range r.Counts() {
		cards = append(cards, statCard{Label: c.Label, Value: fmt.Sprint(c.N), Bad: c.Bad && c.N > 0})
	}
	for len(cards) > 0 {
		n := min(cardsPerRow, len(cards))
		v.Cards = append(v.Cards, cards[:n])
		cards = cards[n:]
	}
	for _, rf := range r.Summary.Refused {
		if rf.Skipped && !r.stuck(rf.ID) {
			v.Skipped = append(v.Skipped, refusalView{Row: rf.Row, Link: r.RowLink(rf.Row), ID: r.text(rf.ID, capID), Reason: r.text(rf.Reason, capDetail)})
		}
	}
	for _, c := range r.Summary.WriteConflicts {
		v.WriteBack = append(v.WriteBack, "conflict: "+r.text(c.String(), capDetail))
	}
	for _, e := range r.Summary.WriteErrors {
		v.WriteBack = append(v.WriteBack, "error: "+r.text(e, capDetail))
	}
	v.Settings = r.settingsView()
	if r.Store != "" {
		v.Store = r.text(r.Store, capName)
	}
	return v
}

func (r *Run) settingsView() settingsView {
	s := r.Settings
	sv := settingsView{SourceFilter: r.text(s.SourceFilter, capName), Force: s.Force, Concurrency: "4 (the default)"}
	if s.Concurrency > 0 {
		sv.Concurrency = fmt.Sprint(s.Concurrency)
	}
	switch {
	case s.All:
		sv.Selection = "--all (every waiting row)"
	default:
		ids := make([]string, len(s.IDs))
		for i, id := range s.IDs {
			ids[i] = r.text(id, capID)
		}
		sv.Selection = capText("IDs: "+strings.Join(ids, ", "), capDetail)
	}
	list := func(xs []string) []string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = r.text(x, capDetail)
		}
		return out
	}
	for _, src := range s.Sources {
		x := sourceView{Name: r.text(src.Name, capName), Preset: r.text(src.Preset, capName),
			URLPrefixes: list(src.URLPrefixes), RedirectPrefixes: list(src.RedirectPrefixes), Headers: list(src.Headers),
			Rate: "unlimited", Attempts: "default", Timeout: "default"}
		if src.RatePerMinute > 0 {
			x.Rate = fmt.Sprintf("%d/min", src.RatePerMinute)
		}
		if src.MaxAttempts > 0 {
			x.Attempts = fmt.Sprint(src.MaxAttempts)
		}
		if src.Timeout != "" {
			x.Timeout = r.text(src.Timeout, capName)
		}
		sv.Sources = append(sv.Sources, x)
	}
	return sv
}
