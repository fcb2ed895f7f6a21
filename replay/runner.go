package replay

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/store"
)

// Runner replays rows of one sheet through one client: Plan for a confirm dialog or a dry
// run, Replay for the run itself (Run, the one replay-then-write-back loop shared with
// `triage replay`). The TUI uses it as its Replayer.
type Runner struct {
	// Client sends the calls; its Sources are the configured sources.
	Client *Client
	// Store is where outcomes and keys are written back.
	Store Store
	// Concurrency bounds the requests in flight (0: Run's default: each source's own
	// concurrency, DefaultConcurrency shared by the sources without one; see
	// RunOptions.Concurrency).
	Concurrency int
}

// Plan says what a replay of recs would send (with redacted headers) and refuse. It does no
// I/O, so it can back a confirm dialog and a dry-run preview (also on a read-only sheet,
// where Replay then sends nothing).
func (r *Runner) Plan(t *model.Table, recs []*model.Record) model.ReplayPlan {
	c := r.Client
	jobs, refused := Plan(t, recs, c.Sources, c.now(), false)
	p := model.ReplayPlan{Refused: refused}
	seenSrc, seenDest := map[string]bool{}, map[string]bool{}
	for _, j := range jobs {
		p.Calls = append(p.Calls, model.PlannedCall{ID: j.ID, Row: j.Row, Method: j.Call.Method, URL: j.Call.URL, Key: j.Call.Key,
			Source: j.Call.Source, Headers: c.Redact(c.Sources[j.Call.Source])})
		if !seenSrc[j.Call.Source] {
			seenSrc[j.Call.Source] = true
			p.Sources = append(p.Sources, j.Call.Source)
		}
		if d := destination(j.Call.URL); !seenDest[d] {
			seenDest[d] = true
			p.Destinations = append(p.Destinations, d)
		}
	}
	return p
}

// Replay runs Run over recs and returns its summary. It blocks; progress (may be nil) is
// called from the run's goroutines, one call at a time. On a read-only store (one with a
// ReadOnly method that says so) it sends nothing and refuses every row: their outcomes and
// keys could not be written back.
func (r *Runner) Replay(ctx context.Context, t *model.Table, recs []*model.Record, progress func(model.ReplayEvent)) model.ReplaySummary {
	if ro, ok := r.Store.(store.ReadOnlyReporter); ok && ro.ReadOnly() {
		return readOnlySummary(recs)
	}
	return Run(ctx, r.Client, r.Store, t, recs, RunOptions{Concurrency: r.Concurrency, Progress: progress})
}

// readOnlySummary refuses every record because the sheet is open read-only.
func readOnlySummary(recs []*model.Record) model.ReplaySummary {
	sum := model.ReplaySummary{Counts: map[model.RowState]int{}}
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		sum.Refused = append(sum.Refused, model.Refusal{ID: rec.ID, Row: rec.Row,
			Reason: fmt.Sprintf("row %d: the sheet is open read-only, so a replay's outcome could not be written back; nothing is sent", rec.Row)})
		sum.Counts[model.StateRefused]++
	}
	return sum
}

// destination is a URL's scheme, host and path up to its last slash: where a call goes, for
// a confirm dialog ("https://crm.example.com/v1/").
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
