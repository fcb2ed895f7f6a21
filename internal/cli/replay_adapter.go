package cli

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/tui"
)

// replayAdapter lets the TUI replay rows through the replay package without importing it: it
// translates tui.Replayer calls to replay.Plan and replay.Run (the one replay-then-write-back
// loop, shared with `triage replay`) and their results back to the TUI's mirror types.
type replayAdapter struct {
	// client sends the calls; its Sources should be sources.
	client *replay.Client
	// store is where outcomes and minted keys are written back.
	store replay.Store
	// sources are the configured sources (default: client.Sources).
	sources map[string]*replay.Source
	// now is the clock Plan checks key lifetimes against (default time.Now).
	now func() time.Time
	// concurrency bounds the requests in flight (0: the replay default, 4).
	concurrency int
}

var _ tui.Replayer = (*replayAdapter)(nil)

func (a *replayAdapter) srcs() map[string]*replay.Source {
	if a.sources != nil {
		return a.sources
	}
	return a.client.Sources
}

func (a *replayAdapter) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

// readOnly reports whether the store refuses writes (sheets.Store opened with --readonly).
// A replay then sends nothing: its outcomes and minted keys could not be written back.
func (a *replayAdapter) readOnly() bool {
	ro, ok := a.store.(interface{ ReadOnly() bool })
	return ok && ro.ReadOnly()
}

// readOnlyRefusals refuses every record because the sheet is open read-only.
func readOnlyRefusals(recs []*model.Record) []tui.RefusedRow {
	out := make([]tui.RefusedRow, 0, len(recs))
	for _, r := range recs {
		if r == nil {
			continue
		}
		out = append(out, tui.RefusedRow{ID: r.ID, Row: r.Row,
			Reason: fmt.Sprintf("row %d: the sheet is open read-only, so a replay's outcome could not be written back; nothing is sent", r.Row)})
	}
	return out
}

// Plan says what a replay of recs would send (with redacted headers) and refuse. It does no
// I/O: it backs the TUI's confirm dialog and dry-run preview (also on a read-only sheet,
// where Replay then sends nothing).
func (a *replayAdapter) Plan(t *model.Table, recs []*model.Record) tui.ReplayPlan {
	sources := a.srcs()
	jobs, refused := replay.Plan(t, recs, sources, a.clock(), false)
	var p tui.ReplayPlan
	seenSrc, seenDest := map[string]bool{}, map[string]bool{}
	for _, j := range jobs {
		p.Calls = append(p.Calls, tui.PlannedCall{ID: j.ID, Method: j.Call.Method, URL: j.Call.URL, Key: j.Call.Key,
			Source: j.Call.Source, Row: j.Row, Headers: a.client.Redact(sources[j.Call.Source])})
		if !seenSrc[j.Call.Source] {
			seenSrc[j.Call.Source] = true
			p.Sources = append(p.Sources, j.Call.Source)
		}
		if d := destination(j.Call.URL); !seenDest[d] {
			seenDest[d] = true
			p.Destinations = append(p.Destinations, d)
		}
	}
	for _, r := range refused {
		p.Refused = append(p.Refused, tui.RefusedRow{ID: r.ID, Row: r.Row, Reason: r.Reason, Skipped: r.Skipped})
	}
	return p
}

// destination is a URL's scheme, host and path up to its last slash: where a call goes, for
// the confirm dialog ("https://crm.example.com/v1/").
func destination(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return raw
	}
	path := u.EscapedPath()
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		path = path[:i+1]
	} else {
		path = "/"
	}
	return u.Scheme + "://" + u.Host + path
}

// Replay runs replay.Run and reports its progress and summary in the TUI's types. It blocks;
// progress (may be nil) is called from the run's goroutines, one call at a time. On a
// read-only store it sends nothing and reports every row refused.
func (a *replayAdapter) Replay(ctx context.Context, t *model.Table, recs []*model.Record, progress func(tui.ReplayProgress)) tui.ReplayReport {
	if a.readOnly() {
		ref := readOnlyRefusals(recs)
		return tui.ReplayReport{Counts: map[string]int{replay.StateRefused: len(ref)}, Refused: ref}
	}
	opts := replay.RunOptions{Concurrency: a.concurrency}
	if progress != nil {
		opts.Progress = func(ev replay.Event) { progress(toReplayProgress(ev)) }
	}
	return toReplayReport(replay.Run(ctx, a.client, a.store, t, recs, opts))
}

func toReplayHalt(h *replay.Halt) *tui.ReplayHalt {
	if h == nil {
		return nil
	}
	return &tui.ReplayHalt{Cause: h.Cause, Source: h.Source, Detail: h.Detail}
}

func toReplayProgress(ev replay.Event) tui.ReplayProgress {
	counts := make(map[string]int, len(ev.Counts))
	for o, n := range ev.Counts {
		counts[o.String()] = n
	}
	return tui.ReplayProgress{ID: ev.Row.ID, Row: ev.Row.Row, State: ev.Row.State, Detail: ev.Row.Detail,
		Attempts: ev.Row.Attempts, Done: ev.Done, Total: ev.Total, Counts: counts, Halt: toReplayHalt(ev.Halted)}
}

func toReplayReport(sum replay.Summary) tui.ReplayReport {
	rep := tui.ReplayReport{
		Counts:       make(map[string]int, len(sum.Counts)),
		Halt:         toReplayHalt(sum.Halted),
		NotAttempted: append([]string(nil), sum.NotAttempted...),
		WriteErrors:  append([]string(nil), sum.WriteErrors...),
		Cancelled:    sum.Cancelled,
	}
	for k, v := range sum.Counts {
		rep.Counts[k] = v
	}
	done := 0
	for _, r := range sum.Rows {
		done++
		rep.Rows = append(rep.Rows, tui.ReplayProgress{ID: r.ID, Row: r.Row, State: r.State, Detail: r.Detail,
			Attempts: r.Attempts, Done: done, Total: len(sum.Rows)})
	}
	for _, r := range sum.Refused {
		rep.Refused = append(rep.Refused, tui.RefusedRow{ID: r.ID, Row: r.Row, Reason: r.Reason, Skipped: r.Skipped})
	}
	for _, c := range sum.WriteConflicts {
		rep.Conflicts = append(rep.Conflicts, c.String())
	}
	return rep
}
