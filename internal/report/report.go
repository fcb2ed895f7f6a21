// Package report writes what an unattended `triage replay` run leaves for the people who
// read it: a run report in HTML (for a mail client) or Markdown, and the one short alert posted to a chat webhook when a run halts or leaves rows
// not done.
//
// Everything shown comes from the sheet, a destination's answer or the config, so every text
// goes through one path (view.go's text): values of the sources' secrets are scrubbed out,
// terminal controls and bidi overrides become visible placeholders (model.SanitizeLine), and
// it is capped; then each format escapes it for itself (html/template; code spans in
// Markdown; Slack's three entities in the alert). The only links are the ones this package
// builds to rows of the spreadsheet on docs.google.com: a URL found in a cell is never made
// clickable.
//
// It imports model and config only: the CLI gathers the Run, checks where it goes before the
// run (Prepare) and hands it over after it (Delivery.Deliver), which writes the report (HTML
// or Markdown) and posts the alert (NewAlert, Post).
//
// The design it follows, and the section (§N) and invariant numbers its comments cite, are in
// docs/DESIGN.md.
package report

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
)

// Run is one finished replay run, as the report and the alert describe it.
type Run struct {
	// Tab is the dead-letter tab's name; SheetGID its sheet ID (the #gid= of its links).
	Tab      string
	SheetGID int64
	// SpreadsheetID is the spreadsheet's ID; without it rows are listed without links.
	SpreadsheetID string
	// Store names the database the run wrote to, its password redacted ("" for the sheet).
	Store string
	// Summary is what replay.Run returned.
	Summary model.ReplaySummary
	// Selected is how many rows the command line picked (unknown IDs included).
	Selected int
	// UnknownIDs are IDs given that no row has; Excluded are IDs given whose row is of
	// another source than --source.
	UnknownIDs []string
	Excluded   []model.Refusal
	// Stuck are IDs skipped by rule that still count as not done: a rejected or discarded row
	// named on the command line was asked for and not replayed (DESIGN §7's exit code 1).
	Stuck []string
	// Started and Ended bound the run (replay.Run's call).
	Started, Ended time.Time
	// ExitCode is the command's exit code for the run (DESIGN §7).
	ExitCode int
	// Settings is the configuration that ran.
	Settings Settings
	// Secrets are values that must never appear in a report or an alert (the sources'
	// header values, literal and from the environment): any text holding one has it
	// replaced by <redacted>. They are never rendered.
	Secrets []string
}

// Settings is the configuration a run ran with: the command line's selection and the sources,
// their secrets redacted (Sources builds them).
type Settings struct {
	// All is --all; IDs are the IDs given instead.
	All bool
	IDs []string
	// SourceFilter is --source ("" for every source).
	SourceFilter string
	// Concurrency is --concurrency (0: the default).
	Concurrency int
	// Force is --force (rows older than their key_ttl replayed too).
	Force bool
	// Sources are the configured sources, by name.
	Sources []Source
}

// Source is a configured source as a report shows it: where it may send and how, with each
// header's value redacted.
type Source struct {
	Name             string
	Preset           string
	URLPrefixes      []string
	RedirectPrefixes []string
	// Headers are "Name: env:VAR" (the variable's name, never its value) or
	// "Name: <redacted>" for a literal value.
	Headers       []string
	RatePerMinute int
	MaxAttempts   int
	Timeout       string
}

// Redacted is what a literal header value is shown as.
const Redacted = "<redacted>"

// Sources turns the config's sources into the report's, sorted by name, secrets redacted: an
// "env:NAME" header shows the variable's name, a literal value shows as <redacted>.
func Sources(cfg *config.Config) []Source {
	if cfg == nil {
		return nil
	}
	var out []Source
	for name, sec := range cfg.Sources {
		s := Source{Name: name, Preset: sec.PresetName(),
			URLPrefixes:      append([]string(nil), sec.URLPrefixes...),
			RedirectPrefixes: append([]string(nil), sec.RedirectPrefixes...),
			RatePerMinute:    sec.RatePerMinute, MaxAttempts: sec.MaxAttempts, Timeout: strings.TrimSpace(sec.Timeout)}
		for h, v := range sec.Headers {
			shown := Redacted
			if env, ok := strings.CutPrefix(strings.TrimSpace(v), model.EnvPrefix); ok {
				shown = model.EnvPrefix + env
			}
			s.Headers = append(s.Headers, h+": "+shown)
		}
		sort.Strings(s.Headers)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// minSecret is the shortest secret scrubbed from text: a shorter one would blank out
// ordinary words, and is no secret anyway.
const minSecret = 4

// Secrets are the values of the config's source headers that must never be shown: literal
// values, and the environment's values of "env:NAME" ones (read through getenv).
func Secrets(cfg *config.Config, getenv func(string) string) []string {
	if cfg == nil {
		return nil
	}
	var out []string
	for _, sec := range cfg.Sources {
		for _, v := range sec.Headers {
			v = strings.TrimSpace(v)
			if env, ok := strings.CutPrefix(v, model.EnvPrefix); ok {
				if getenv == nil {
					continue
				}
				v = strings.TrimSpace(getenv(env))
			}
			if len(v) >= minSecret {
				out = append(out, v)
			}
			// "Bearer sk_live_x": a destination may quote only the credential, without its
			// scheme; each word long enough to be one is a secret on its own too.
			if words := strings.Fields(v); len(words) > 1 {
				for _, w := range words {
					if len(w) >= minCredentialWord {
						out = append(out, w)
					}
				}
			}
		}
	}
	return out
}

// minCredentialWord is the shortest word of a multi-word header value ("Bearer <token>",
// "Basic <base64>") scrubbed on its own: schemes ("Bearer", "Token") are shorter; tokens are
// longer.
const minCredentialWord = 8

// RowLink is the Google Sheets address of a row of the run's tab: the spreadsheet, the tab's
// gid and the row's range (the same form as the TUI's `o`). "" when there is no spreadsheet
// ID or row number to link to.
func (r *Run) RowLink(row int) string {
	if r.SpreadsheetID == "" || row <= 0 {
		return ""
	}
	return fmt.Sprintf("https://docs.google.com/spreadsheets/d/%s/edit#gid=%d&range=A%d", url.PathEscape(r.SpreadsheetID), r.SheetGID, row)
}

// NotDoneRow is one selected row that is not done, as every part of the report and the alert
// counts it: a row sent without success (or never sent), a refused row, a sticky row named on
// the command line, an excluded ID or an unknown one. Label is the count it falls under.
type NotDoneRow struct {
	Row      int // 0 when no row has the ID (unknown)
	ID       string
	Source   string
	Label    string
	Detail   string
	Attempts int
}

// Labels of the not-done rows that are not a replay state.
const (
	// LabelSticky: a rejected or discarded row named on the command line, skipped by rule.
	LabelSticky = "sticky"
	// LabelUnknown: an ID given that no row has.
	LabelUnknown = "unknown"
	// LabelExcluded: an ID given whose row is of another source than --source.
	LabelExcluded = "excluded"
	// LabelNotWritten marks a row the destination acted on whose outcome could not be written
	// back to its row.
	LabelNotWritten = "not written back"
	// LabelLeftOut: a row the run would have sent, left for the next run by its row limit
	// (--limit).
	LabelLeftOut = "left out"
)

// NotDoneRows is the one list of the selected rows that are not done: the report's stat card,
// its "Rows not done" title and table, the Markdown and the alert all count this list, so they
// agree. A row refused while sending is in both Summary.Rows and Summary.Refused, and is
// listed once.
func (r *Run) NotDoneRows() []NotDoneRow {
	var out []NotDoneRow
	sentRefused := map[string]bool{}
	for _, row := range r.Summary.Rows {
		if row.Done() {
			continue
		}
		if row.State == model.StateRefused {
			sentRefused[row.ID] = true
		}
		label, detail := string(row.State), row.Detail
		if row.State.Success() {
			// Delivered, but the sheet doesn't say so: as the exit code and the CLI's count,
			// not done (a rerun sends it again, under its key: harmless, invariant 3).
			label, detail = LabelNotWritten, string(row.State)+", but its outcome was not written back: "+row.WriteBack
		}
		out = append(out, NotDoneRow{Row: row.Row, ID: row.ID, Source: row.Source, Label: label, Detail: detail, Attempts: row.Attempts})
	}
	for _, rf := range r.Summary.Refused {
		switch {
		case !rf.Skipped && !sentRefused[rf.ID]:
			out = append(out, NotDoneRow{Row: rf.Row, ID: rf.ID, Label: string(model.StateRefused), Detail: rf.Reason})
		case rf.Skipped && r.stuck(rf.ID):
			out = append(out, NotDoneRow{Row: rf.Row, ID: rf.ID, Label: LabelSticky, Detail: rf.Reason + "; named on the command line, so not done"})
		}
	}
	for _, id := range r.UnknownIDs {
		out = append(out, NotDoneRow{ID: id, Label: LabelUnknown, Detail: "no row of the tab has this ID"})
	}
	for _, rf := range r.Excluded {
		out = append(out, NotDoneRow{Row: rf.Row, ID: rf.ID, Label: LabelExcluded, Detail: rf.Reason})
	}
	for _, rf := range r.Summary.LeftOut {
		out = append(out, NotDoneRow{Row: rf.Row, ID: rf.ID, Label: LabelLeftOut, Detail: rf.Reason})
	}
	return out
}

// stuck reports whether a skipped row's ID is one of Run.Stuck.
func (r *Run) stuck(id string) bool { return slices.Contains(r.Stuck, id) }

// NotDone counts the selected rows that are not done: len(NotDoneRows()).
func (r *Run) NotDone() int { return len(r.NotDoneRows()) }

// Delivered counts the rows the destinations have acted on (delivered and duplicate).
func (r *Run) Delivered() int {
	n := 0
	for _, row := range r.Summary.Rows {
		if row.State.Success() {
			n++
		}
	}
	return n
}

// Counts are the rows by final state, in the order the report shows them, zeros included
// for the replay states. The Bad counts are NotDoneRows by label, so they add up to NotDone.
func (r *Run) Counts() []Count {
	by := map[string]int{}
	for _, row := range r.Summary.Rows {
		if row.State.Success() {
			by[string(row.State)]++
		}
	}
	for _, rf := range r.Summary.Refused {
		if rf.Skipped && !r.stuck(rf.ID) {
			by[string(model.StateSkipped)]++
		}
	}
	var extra []string // labels of not-done rows beyond countOrder (e.g. a row left queued)
	for _, nd := range r.NotDoneRows() {
		if by[nd.Label] == 0 && !slices.Contains(countOrder, model.RowState(nd.Label)) {
			extra = append(extra, nd.Label)
		}
		by[nd.Label]++
	}
	out := make([]Count, 0, len(countOrder)+len(extra))
	for _, s := range countOrder {
		out = append(out, Count{Label: string(s), N: by[string(s)], Bad: !s.Success() && s != model.StateSkipped})
	}
	for _, l := range extra {
		out = append(out, Count{Label: l, N: by[l], Bad: true})
	}
	return out
}

// Count is one stat card: a state and how many rows ended in it. Bad marks the states that
// leave a row not done.
type Count struct {
	Label string
	N     int
	Bad   bool
}

var countOrder = []model.RowState{
	model.StateDelivered, model.StateDuplicate, model.StateRejected, model.StateSystemic,
	model.StateRetryable, model.StateDeferred, model.StateNotAttempted, model.StateRefused, model.StateSkipped,
}

// Duration is how long the run took (0 when the times are missing or reversed).
func (r *Run) Duration() time.Duration {
	if r.Started.IsZero() || r.Ended.Before(r.Started) {
		return 0
	}
	return r.Ended.Sub(r.Started)
}

// Finished counts the rows that reached a final outcome by being sent (not the ones the run
// never reached): the numerator of rows/s.
func (r *Run) Finished() int {
	n := 0
	for _, row := range r.Summary.Rows {
		if row.State.Final() && row.State != model.StateNotAttempted {
			n++
		}
	}
	return n
}

// Rate is "12.3 rows/s", or "–" when the run took no measurable time.
func (r *Run) Rate() string {
	d := r.Duration()
	if d <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f rows/s", float64(r.Finished())/d.Seconds())
}

// Outcome is the run's outcome in a few words, and the exit code's meaning.
func (r *Run) Outcome() string {
	switch {
	case r.Summary.Halted != nil:
		return "halted"
	case r.Summary.Cancelled:
		return "interrupted"
	case r.ExitCode != 0:
		return "some rows not done"
	}
	return "every selected row done"
}
