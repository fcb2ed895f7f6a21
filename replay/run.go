package replay

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/store"
)

// Store is where a run writes keys and outcomes back (store.Applier; sheets.Store and
// postgres.Store satisfy it). Apply locates each edit's row by ID at write time and writes
// nothing of an edit whose expected cells changed (invariant 1).
type Store = store.Applier

// Leaser is a Store that leases dead letters to one run at a time (store.Leaser;
// sheets.Store and postgres.Store satisfy it; see model.Leases). Run leases every row it
// plans to send before the first request leaves, skips the rows another live run holds
// (saying whose), renews its lease after each write-back, and releases it when it ends,
// whatever happened: a row is never sent by two runs at once.
type Leaser = store.Leaser

// WriteCounter is a Store that counts the write requests it has sent to its backend (the CLI
// counts sheets.Store's spreadsheets.batchUpdate calls, one per write round, fences and
// retries included). Run reports how many went out while it ran as
// ReplaySummary.WriteRequests; of a Store without it, it counts one per Apply, the least an
// Apply costs.
type WriteCounter interface {
	WriteRequests() int
}

// RunOptions tune a bulk run.
type RunOptions struct {
	// Concurrency bounds the requests in flight at once (at most 20); a source's own
	// Concurrency, when lower, bounds its own. Unset (0: the CLI without --concurrency), a
	// default nobody asked for doesn't cap what the config says: each source with its own
	// Concurrency gets it (`concurrency = 10` means 10), the sources without one share
	// DefaultConcurrency (4), and the run's bound is their sum (at most 20).
	Concurrency int
	// DryRun plans and reports what would be sent; nothing is sent or written.
	DryRun bool
	// Force replays rows older than their source's key lifetime.
	Force bool
	// Progress, when set, is told of every row state change and of a halt. It is called from
	// the run's goroutines, one call at a time, and must be cheap (post a message, no I/O).
	Progress func(model.ReplayEvent)
	// FlushEvery writes outcomes back after this many rows (default 50).
	FlushEvery int
	// FlushInterval writes outcomes back at least this often while rows finish (default 2s).
	FlushInterval time.Duration
	// Deadline, when set, is when the run must be over (`triage replay --max-time`): from
	// StopMargin before it, on the client's clock (Client.Now), no send starts, and the run
	// ends as a cancel ends it: requests in flight finish or time out and their outcomes are
	// written back, retries are not made, and the rows never started are NotAttempted, for
	// the next run (ReplaySummary.TimeUp). Checked before each request leaves, and a timer
	// ends the waits (backoff, a source's rate) that would outlast it.
	Deadline time.Time
	// Limit, when positive, replays at most Limit of the rows Plan would send (after every
	// rule: the records given, rows not waiting skipped, refusals): the oldest by their rows'
	// timestamps, ties by sheet row, undated rows last, sent oldest first. The others are
	// ReplaySummary.LeftOut, for the next run; they are not leased, checked or sent. A dry
	// run lists what it would send within the limit.
	Limit int
}

// MaxConcurrency is the upper bound of RunOptions.Concurrency.
const MaxConcurrency = 20

// The halt rule (invariant 7), in completion order of final results:
//   - systemic halts at once;
//   - retryable counts, and so does deferred (the destination asked us to go away: three in a
//     row means it is not taking calls);
//   - delivered and duplicate reset the count;
//   - rejected neither counts nor resets: it is a real answer about one row, which says the
//     destination is up, but not that it is accepting calls;
//   - results cut short by the halt or a cancel are not counted.
const haltAfterRetryable = 3

type breaker struct {
	// after is how many retryable results in a row halt (0: haltAfterRetryable; negative:
	// never, systemic still halts). A bulk replay uses the default; a Producer may not.
	after       int
	mu          sync.Mutex
	consecutive int
	halted      *model.Halt
	last        []string
}

// record feeds a final result and returns the halt it causes, if it is the one that trips.
func (b *breaker) record(src string, res Result) *model.Halt {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.halted != nil || res.Interrupted {
		return nil
	}
	switch res.Outcome {
	case Systemic:
		b.halted = &model.Halt{Cause: "systemic", Source: src, Detail: res.Detail}
		return b.halted
	case Retryable:
		b.consecutive++
		b.last = append(b.last, res.Detail)
		after := b.after
		if after == 0 {
			after = haltAfterRetryable
		}
		if after > 0 && b.consecutive >= after {
			b.halted = &model.Halt{Cause: fmt.Sprintf("%d retryable in a row", after), Source: src,
				Detail: fmt.Sprintf("%d rows in a row got no usable answer; the destination looks down or overloaded: check %s and replay later (last: %s)", b.consecutive, src, res.Detail)}
			return b.halted
		}
	case Delivered, Duplicate:
		b.consecutive = 0
		b.last = b.last[:0]
	}
	return nil
}

func (b *breaker) halt() *model.Halt {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.halted
}

// runner is one Run's shared state.
type runner struct {
	c      *Client
	t      *model.Table
	opts   RunOptions
	total  int
	brk    breaker
	cancel context.CancelCauseFunc

	pmu    sync.Mutex // serialises Progress and guards counts/done
	counts map[model.RowState]int
	done   int
}

func (r *runner) emit(row model.RowResult, final bool, o Outcome) {
	r.pmu.Lock()
	defer r.pmu.Unlock()
	if final {
		r.done++
		if o != 0 {
			r.counts[o.State()]++
		}
	}
	if r.opts.Progress == nil {
		return
	}
	counts := make(map[model.RowState]int, len(r.counts))
	for k, v := range r.counts {
		counts[k] = v
	}
	r.opts.Progress(model.ReplayEvent{Row: row, Counts: counts, Done: r.done, Total: r.total, Halted: r.brk.halt()})
}

// Run replays records of a dead-letter tab and writes each outcome back: the one
// replay-then-write-back loop behind both the TUI and `triage replay`.
//
// It plans (see Plan), then, in one Apply before anything is sent, checks every planned row
// against the sheet as it is now (its status and key cells as loaded) and writes every key
// not yet in its key cell (minted, or taken from the payload) to that cell: a row that
// changed since the load, or whose key can't be written, is refused (see checkRows). Then it
// sends rows in plan order with at most Concurrency requests in flight, each source's rows
// at its rate, and one request of a source at a time until that source has answered one with
// success (see probe). Outcomes are written back in batches (FlushEvery rows or FlushInterval,
// whichever first, and a final flush):
// status (delivered, rejected, or unchanged for retryable), attempts, error and replayed_at,
// each edit expecting the status the row had, only for columns the tab has. Sends wait
// while two batches of outcomes are unflushed, and a write-back the store could not finish
// (model.Conflict.Undecided, or damage) stops the run like a halt (ErrWriteBackStalled), the
// outcomes still arriving going into one final flush.
//
// A systemic result halts the run at once, three retryable final results in a row halt it;
// the halt is run-wide. After a halt, once ctx is cancelled, or once the time given is nearly
// up (RunOptions.Deadline), nothing new is sent: requests already in flight (sent before it)
// finish or time out and their outcomes are written back, rows waiting for their source's
// probe or a slot are not sent, and rows never sent are NotAttempted. A source's first answer
// being systemic thus costs that source one call. A row limit (RunOptions.Limit) is applied
// to the plan, before anything is leased or sent.
func Run(ctx context.Context, c *Client, st Store, t *model.Table, recs []*model.Record, opts RunOptions) model.ReplaySummary {
	c.init()
	opts = withRunDefaults(opts)
	jobs, refused := Plan(t, recs, c.Sources, c.now(), opts.Force)
	sum := model.ReplaySummary{Counts: map[model.RowState]int{}, Refused: refused}
	for _, f := range refused {
		sum.Counts[f.State()]++
	}
	jobs, sum.LeftOut = limitJobs(jobs, opts.Limit)
	if opts.DryRun {
		return dryRun(c, jobs, sum)
	}
	// Writes must land even after a cancel: the outcomes of in-flight calls are facts.
	wctx := context.WithoutCancel(ctx)
	counter, counted := st.(WriteCounter)
	writesBefore := 0
	if counted {
		writesBefore = counter.WriteRequests()
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	budget := timeBudget{now: c.now}
	if !opts.Deadline.IsZero() {
		budget.stopAt = opts.Deadline.Add(-StopMargin(t, recs, c.Sources))
	}
	if budget.up() {
		// No time to send anything: no row is leased, checked or written either.
		cancel(ErrTimeUp)
	}
	var leases *model.Leases
	lr, leasing := st.(Leaser)
	if leasing && runCtx.Err() == nil && len(jobs) > 0 {
		jobs, leases = leaseRows(wctx, lr, t, jobs, &sum)
		if leases != nil {
			sum.WriteRequests += 2 // the lease, and its release
		}
	}
	if runCtx.Err() == nil {
		jobs = checkRows(wctx, st, t, jobs, &sum)
	}

	r := &runner{c: c, t: t, opts: opts, total: len(jobs), counts: map[model.RowState]int{}}
	r.cancel = cancel

	w := newWriter(wctx, st, opts, len(jobs))
	if leases != nil {
		w.renew = func() error { return lr.Renew(wctx, *leases) }
	}
	// A write-back the store could not finish (rows kept moving under every round of it,
	// and values of ours may be left where they were not meant) stops the run: outcomes it
	// can't record would only pile up, and every row it sends now is one more to check.
	w.stalled = func() { cancel(ErrWriteBackStalled) }

	// The deadline's timer, stopped (and waited for) once every row is over.
	watchCtx, stopWatch := context.WithCancel(runCtx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if !budget.stopAt.IsZero() {
			budget.watch(watchCtx, cancel)
		}
	}()

	sent := r.sendLanes(runCtx, jobs, opts.Concurrency, budget, cancel, w)
	stopWatch()
	<-watched

	sum.Halted = r.brk.halt()
	r.summarise(runCtx, jobs, sent, &sum)
	sum.Cancelled = ctx.Err() != nil
	w.close()
	if leases != nil {
		if err := lr.Release(wctx, *leases); err != nil {
			sum.WriteErrors = append(sum.WriteErrors, fmt.Sprintf("releasing this run's leases failed (%v): other runs skip its rows until the lease runs out", err))
		}
	}
	w.account(&sum)
	if counted {
		sum.WriteRequests = counter.WriteRequests() - writesBefore
	}
	return sum
}

func stopReason(ctx context.Context) string {
	switch {
	case errors.Is(context.Cause(ctx), ErrHalted):
		return "the run halted before this row"
	case errors.Is(context.Cause(ctx), ErrWriteBackStalled):
		return "the run stopped before this row: the sheet kept moving under triage's write-back, so outcomes could not be recorded; replay again once it is quiet"
	case errors.Is(context.Cause(ctx), ErrTimeUp):
		return "the run's time was nearly up before this row; the next run sends it"
	}
	return "the run was cancelled before this row"
}

// ErrWriteBackStalled is the cause of a run's context once a write-back could not be
// finished (model.Conflict.Undecided, or values of ours left on other rows: model.Damage):
// nothing new is sent after it.
var ErrWriteBackStalled = errors.New("the sheet kept moving under the write-back")

func withRunDefaults(o RunOptions) RunOptions {
	if o.Concurrency > MaxConcurrency {
		o.Concurrency = MaxConcurrency
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = 50
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 2 * time.Second
	}
	return o
}

// one replays a job and queues its write-back. Each request is admitted by the source's
// probe, then takes its slots (acquire). It reports whether the run's stop cut the row's
// attempts short (Result.Interrupted).
func (r *runner) one(ctx context.Context, j Job, pr *probe, acquire func(context.Context) (func(), error), w *writer) (model.RowResult, bool) {
	rr := model.RowResult{ID: j.ID, Row: j.Row, Source: j.Call.Source, URL: j.Call.URL, Key: j.Call.Key}
	res := r.c.do(ctx, j.Call, hooks{
		admit:   pr.admit,
		acquire: acquire,
		sending: func(n int) {
			s := rr
			s.State, s.Attempts = model.StateSending, n
			r.emit(s, false, 0)
		},
		// Told while the request still holds its admission: a halt is in force, or the probe
		// open, before the next request of the source is admitted.
		settle: func(res Result) {
			if h := r.brk.record(j.Call.Source, res); h != nil {
				r.cancel(ErrHalted)
			}
			pr.settle(res)
		},
	})
	outcome := res.Outcome
	rr.Attempts, rr.Detail = len(res.Attempts), res.Detail
	switch {
	case res.Outcome == Refused:
		rr.State, outcome = model.StateRefused, 0
	case len(res.Attempts) == 0 && res.Outcome == 0:
		rr.State = model.StateNotAttempted
	case res.Deferred:
		rr.State = model.StateDeferred
	default:
		rr.State = res.Outcome.State()
	}
	if len(res.Attempts) == 0 && res.Outcome == Systemic {
		// Broken before anything was sent (a secret missing from the environment).
		if h := r.brk.record(j.Call.Source, res); h != nil {
			r.cancel(ErrHalted)
		}
	}
	if rr.State != model.StateNotAttempted {
		r.emit(rr, true, outcome)
	}
	if len(res.Attempts) > 0 {
		if e, ok := outcomeEdit(r.t, j, res, r.c.now()); ok {
			w.add(e, j)
		}
	}
	return rr, res.Interrupted
}

// outcomeEdit builds a row's write-back (invariant 5): only columns the tab has; the status
// it had is expected unchanged.
func outcomeEdit(t *model.Table, j Job, res Result, now time.Time) (model.Edit, bool) {
	e := model.Edit{Tab: t.Config.Name, ID: j.ID, Expect: map[model.Field]string{}, Set: map[model.Field]string{}}
	has := t.Header.Has
	if has(model.FStatus) {
		e.Expect[model.FStatus] = j.Status
		switch {
		case res.Outcome.Success():
			e.Set[model.FStatus] = t.StatusValue(model.StatusDelivered)
		case res.Outcome == Rejected:
			e.Set[model.FStatus] = t.StatusValue(model.StatusRejected)
		}
	}
	if has(model.FAttempts) {
		e.Set[model.FAttempts] = strconv.Itoa(j.PrevAttempts + len(res.Attempts))
	}
	if has(model.FError) {
		if res.Outcome.Success() {
			e.Set[model.FError] = ""
		} else {
			e.Set[model.FError] = res.Detail
		}
	}
	if has(model.FReplayedAt) {
		e.Set[model.FReplayedAt] = model.FormatTime(now)
	}
	return e, len(e.Set) > 0
}

// leaseRows leases every job's row to this run (see Leaser) and keeps the jobs it got: a row
// another live run holds is skipped, saying whose it is (ReplaySummary.Held groups them); one
// that could not be leased for another reason is refused. If the lease can't be taken at all,
// nothing is sent.
func leaseRows(ctx context.Context, lr Leaser, t *model.Table, jobs []Job, sum *model.ReplaySummary) ([]Job, *model.Leases) {
	keys := make([]string, len(jobs))
	for i, j := range jobs {
		keys[i] = j.ID
	}
	l, err := lr.Lease(ctx, t.Config.Name, keys)
	if err != nil {
		for _, j := range jobs {
			sum.Refused = append(sum.Refused, model.Refusal{ID: j.ID, Row: j.Row, Reason: fmt.Sprintf("row %d: its row could not be leased to this run (%v); not sent", j.Row, err)})
			sum.Counts[model.StateRefused]++
		}
		return nil, nil
	}
	taken := map[string]bool{}
	for _, k := range l.Taken {
		taken[k] = true
	}
	kept := jobs[:0:0]
	for _, j := range jobs {
		switch h, held := l.Held[j.ID]; {
		case taken[j.ID]:
			kept = append(kept, j)
		case held:
			sum.Refused = append(sum.Refused, model.Refusal{ID: j.ID, Row: j.Row, Reason: fmt.Sprintf("row %d: %s", j.Row, h.Reason()), Skipped: true})
			sum.Counts[model.StateSkipped]++
		default:
			why := l.Unleased[j.ID]
			if why == "" {
				why = "the store did not lease it to this run"
			}
			sum.Refused = append(sum.Refused, model.Refusal{ID: j.ID, Row: j.Row, Reason: fmt.Sprintf("row %d: not sent: %s", j.Row, why)})
			sum.Counts[model.StateRefused]++
		}
	}
	sum.Held = model.GroupHeld(l.Held)
	return kept, &l
}

// checkRows is the one write before any request leaves: a single Apply that checks every
// planned row against the sheet as it is now, and writes every key that is not in its row's
// key cell yet (minted, or taken from the payload) to that cell (invariant 3).
//
// Each row's edits expect the status cell as loaded (Job.Status) and the key cell as loaded
// (Job.KeyCell), for the columns the tab has. A row whose key is already in its key cell
// writes that cell back unchanged (an edit needs something to set; on a tab without a key
// column it writes the status back unchanged), so nothing new lands on the sheet. A row with
// a key to save gets two edits: a check of its status alone (writing the status back
// unchanged), then the key write, which expects both cells as loaded and sets the key. A key
// cell found already holding the key (another session saved it meanwhile: a minted key is
// deterministic, a payload key is the payload's) makes the key write a conflict that counts
// as saved; the separate status check then still catches a status that changed too, which a
// store reporting only the key cell's conflict would hide.
//
// A row whose edit is a conflict (its status or key cell changed since the load: it was
// discarded, delivered by another session, or its key was corrected) or is missing (no row
// has its key any more: its key cell, or a cell the key is computed from, changed, or the
// row was deleted) is refused and dropped: sent from the stale snapshot, it could carry a
// key that is no longer the row's (the next replay would send the new one: two calls), or
// replay a row that is no longer waiting (invariant 6). If the Apply fails, nothing was
// verified and every row is refused. On a tab with neither a key nor a status column there
// is nothing to check and no key to save: every row goes on.
func checkRows(ctx context.Context, st Store, t *model.Table, jobs []Job, sum *model.ReplaySummary) []Job {
	c := newRowCheck(t, jobs)
	if len(jobs) == 0 || (!c.hasKey && !c.hasStatus) {
		return jobs
	}
	if st == nil {
		c.refuseAll("there is no store to check its row against before sending; not sent",
			"is not in the key cell and there is no store to write it to before sending; not sent")
	} else {
		sum.WriteRequests++
		res, err := st.Apply(ctx, c.edits)
		if err != nil {
			c.refuseAll(fmt.Sprintf("its row could not be checked against the sheet before sending (%v); not sent", err),
				fmt.Sprintf("could not be written to the key cell before sending (%v); not sent", err))
		} else {
			c.judge(res, sum)
		}
	}
	kept := jobs[:0:0]
	for _, j := range jobs {
		if why, ok := c.bad[j.ID]; ok {
			sum.Refused = append(sum.Refused, model.Refusal{ID: j.ID, Row: j.Row, Reason: fmt.Sprintf("row %d: %s", j.Row, why)})
			sum.Counts[model.StateRefused]++
			continue
		}
		kept = append(kept, j)
	}
	return kept
}

// rowCheck is checkRows' bookkeeping: the edits it sends, what each row is (a key to save,
// where its key came from), and why a row is refused, by ID (the first reason wins).
type rowCheck struct {
	hasKey, hasStatus bool
	jobs              []Job
	edits             []model.Edit
	saveKey           map[string]bool
	origin            map[string]model.KeyOrigin
	bad               map[string]string
}

// newRowCheck builds every row's edits: a row with a key to save gets a check of its status
// alone, then the key write; any other row one edit writing its key (or, without a key
// column, its status) back unchanged.
func newRowCheck(t *model.Table, jobs []Job) *rowCheck {
	c := &rowCheck{hasKey: t.Header.Has(model.FKey), hasStatus: t.Header.Has(model.FStatus), jobs: jobs,
		saveKey: map[string]bool{}, origin: map[string]model.KeyOrigin{}, bad: map[string]string{}}
	tab := t.Config.Name
	for _, j := range jobs {
		c.saveKey[j.ID], c.origin[j.ID] = j.SaveKey, j.KeyOrigin
		switch {
		case j.SaveKey: // SaveKey implies a key column
			if c.hasStatus {
				c.edits = append(c.edits, model.Edit{Tab: tab, ID: j.ID,
					Expect: map[model.Field]string{model.FStatus: j.Status}, Set: map[model.Field]string{model.FStatus: j.Status}})
			}
			c.edits = append(c.edits, model.Edit{Tab: tab, ID: j.ID, Expect: c.expect(j), Set: map[model.Field]string{model.FKey: j.ID}})
		case c.hasKey:
			c.edits = append(c.edits, model.Edit{Tab: tab, ID: j.ID, Expect: c.expect(j), Set: map[model.Field]string{model.FKey: j.KeyCell}})
		default:
			c.edits = append(c.edits, model.Edit{Tab: tab, ID: j.ID, Expect: c.expect(j), Set: map[model.Field]string{model.FStatus: j.Status}})
		}
	}
	return c
}

// expect is the cells a row's edit expects: its status and key cells as loaded, of the
// columns the tab has.
func (c *rowCheck) expect(j Job) map[model.Field]string {
	m := map[model.Field]string{}
	if c.hasStatus {
		m[model.FStatus] = j.Status
	}
	if c.hasKey {
		m[model.FKey] = j.KeyCell
	}
	return m
}

// what names the key a row would save.
func (c *rowCheck) what(id string) string {
	if c.origin[id] == model.KeyPayload {
		return "its key (from the payload)"
	}
	return "its minted key"
}

// isKeyWrite tells a SaveKey row's key write from its status check.
func (c *rowCheck) isKeyWrite(e model.Edit) bool {
	_, ok := e.Set[model.FKey]
	return c.saveKey[e.ID] && ok
}

func (c *rowCheck) refuse(id, why string) {
	if _, ok := c.bad[id]; !ok {
		c.bad[id] = why
	}
}

// refuseAll refuses every row: why for a row to check, what(id)+" "+keyWhy for a row whose
// key was to be saved.
func (c *rowCheck) refuseAll(why, keyWhy string) {
	for _, j := range c.jobs {
		if j.SaveKey {
			c.refuse(j.ID, c.what(j.ID)+" "+keyWhy)
		} else {
			c.refuse(j.ID, why)
		}
	}
}

// judge reads the check's answer: damage refuses every row, a conflict or a missing row its
// own, and a row the store did not confirm every edit of is refused too.
func (c *rowCheck) judge(res model.ApplyResult, sum *model.ReplaySummary) {
	// A cell the check's write hit by mistake and could not put back (rows kept moving
	// through every round): it may be a key cell, this row's or another's, so no row's
	// key is proven. Nothing is sent (invariant 3), and the cells are named.
	for _, d := range res.Damaged {
		sum.WriteErrors = append(sum.WriteErrors, d.String())
	}
	sum.Recovered = append(sum.Recovered, res.Recovered...)
	if n := len(res.Damaged); n > 0 {
		why := fmt.Sprintf("the sheet kept moving while triage checked the rows and saved their keys, and %d cell(s) it hit could not be put back (%s): no key is proven, so nothing was sent; fix those cells, then run again", n, res.Damaged[0].String())
		for _, j := range c.jobs {
			c.refuse(j.ID, why)
		}
	}
	applied := map[string]int{} // edits of the row applied or counted as such
	for _, a := range res.Applied {
		applied[a.Edit.ID]++
	}
	for _, cf := range res.Conflicts {
		c.conflict(cf, applied)
	}
	for _, m := range res.Missing {
		c.refuse(m.ID, fmt.Sprintf("its row changed since it was loaded (no row has the key %q any more: its key cell or a cell its key is computed from changed, or it was deleted); refresh and replay again; not sent", m.ID))
	}
	want := map[string]int{}
	for _, e := range c.edits {
		want[e.ID]++
	}
	for id, n := range want {
		if _, ok := c.bad[id]; !ok && applied[id] < n {
			why := "the store did not confirm its row was checked before sending; not sent"
			if c.saveKey[id] {
				why = fmt.Sprintf("the store did not confirm %s was written to the key cell; not sent", c.what(id))
			}
			c.bad[id] = why
		}
	}
}

// conflict judges one conflict: a key write that found its key already there counts as
// applied; anything else refuses the row, saying why.
func (c *rowCheck) conflict(cf model.Conflict, applied map[string]int) {
	id := cf.Edit.ID
	switch {
	case c.isKeyWrite(cf.Edit) && cf.Reason == "" && cf.Field == model.FKey && strings.TrimSpace(cf.Now) == id:
		// Already there: the key the call carries is the one on the sheet.
		applied[id]++
	case c.isKeyWrite(cf.Edit) && cf.Reason != "":
		c.refuse(id, fmt.Sprintf("%s could not be written to the key cell (%s); not sent", c.what(id), cf.String()))
	case cf.Reason != "":
		c.refuse(id, fmt.Sprintf("its row could not be checked against the sheet before sending (%s); not sent", cf.String()))
	default:
		c.refuse(id, fmt.Sprintf("its row changed since it was loaded (%s); refresh and replay again; not sent", cf.String()))
	}
}

// writer batches write-back edits: a flush every FlushEvery rows or FlushInterval after the
// first unflushed one, whichever comes first, and a final flush on close. Sends can't run
// ahead of it: at most two batches' worth of outcomes are unflushed at once (add waits), so a
// slow or stuck write-back holds the run back instead of letting outcomes that may never be
// recorded pile up. Once a flush has stalled (see Run), the rest waits for the final flush:
// one more Apply, not one per batch.
type writer struct {
	ctx   context.Context
	st    Store
	every int
	in    chan pendingEdit
	room  chan struct{}
	done  chan struct{}
	// owned by the writer goroutine until done is closed:
	requests  int
	conflicts []model.Conflict
	recovered []model.Recovery
	errors    []string
	// unwritten says, by row ID, why a row's outcome was not written back.
	unwritten map[string]string
	iv        time.Duration
	// stalled, when set, is told of a flush the store could not finish (see Run).
	stalled func()
	// renew, when set, renews the run's leases after each flush.
	renew func() error
}

type pendingEdit struct {
	edit model.Edit
	job  Job
}

func newWriter(ctx context.Context, st Store, opts RunOptions, n int) *writer {
	w := &writer{ctx: ctx, st: st, every: opts.FlushEvery, iv: opts.FlushInterval, in: make(chan pendingEdit, n+1), done: make(chan struct{}),
		room: make(chan struct{}, 2*opts.FlushEvery), unwritten: map[string]string{}}
	go w.loop()
	return w
}

// add queues a row's outcome, waiting while two batches are unflushed.
func (w *writer) add(e model.Edit, j Job) {
	w.room <- struct{}{}
	w.in <- pendingEdit{edit: e, job: j}
}

func (w *writer) close() {
	close(w.in)
	<-w.done
}

func (w *writer) loop() {
	defer close(w.done)
	var pending []pendingEdit
	held := 0 // rooms the pending outcomes hold
	stalled := false
	var timer *time.Timer
	var tick <-chan time.Time
	flush := func() {
		if timer != nil {
			timer.Stop()
			timer, tick = nil, nil
		}
		if len(pending) > 0 && w.flush(pending) {
			stalled = true
		}
		pending = nil
		for ; held > 0; held-- {
			<-w.room
		}
	}
	for {
		select {
		case p, ok := <-w.in:
			if !ok {
				flush()
				return
			}
			pending = append(pending, p)
			switch {
			case stalled:
				// Run has stopped sending; what still arrives waits for the final flush, and
				// nothing need wait for room any more.
				<-w.room
			case len(pending) >= w.every:
				held++
				flush()
			default:
				held++
				if timer == nil {
					timer = time.NewTimer(w.iv)
					tick = timer.C
				}
			}
		case <-tick:
			timer, tick = nil, nil
			flush()
		}
	}
}

// flush sends one Apply. A failure is reported, never retried here (the store already retries
// transient API errors; replaying the rows again is harmless). It reports whether the store
// could not finish the write (see Run), having told w.stalled.
func (w *writer) flush(batch []pendingEdit) (stalled bool) {
	if w.st == nil {
		return false
	}
	edits := make([]model.Edit, len(batch))
	rows := map[string]int{}
	for i, p := range batch {
		edits[i] = p.edit
		rows[p.edit.ID] = p.job.Row
	}
	w.requests++
	ctx, cancel := context.WithTimeout(w.ctx, 2*time.Minute)
	defer cancel()
	res, err := w.st.Apply(ctx, edits)
	if err != nil {
		ids := make([]string, 0, len(batch))
		for _, p := range batch {
			ids = append(ids, fmt.Sprintf("row %d", p.job.Row))
			w.unwritten[p.edit.ID] = fmt.Sprintf("its outcome could not be written back (%v); the row keeps its old status", err)
		}
		w.errors = append(w.errors, fmt.Sprintf("writing back %d outcome%s failed (%v): %s keep their old status; replaying them again is harmless",
			len(batch), words.Plural(len(batch), "", "s"), err, strings.Join(ids, ", ")))
		return false
	}
	w.conflicts = append(w.conflicts, res.Conflicts...)
	w.recovered = append(w.recovered, res.Recovered...)
	for _, d := range res.Damaged {
		w.errors = append(w.errors, d.String())
	}
	if w.renew != nil {
		if err := w.renew(); err != nil {
			w.errors = append(w.errors, fmt.Sprintf("renewing this run's leases failed (%v): another run may take its rows once the lease runs out", err))
		}
	}
	stalled = len(res.Damaged) > 0
	for _, c := range res.Conflicts {
		stalled = stalled || c.Undecided
	}
	if stalled && w.stalled != nil {
		w.stalled()
	}
	for _, m := range res.Missing {
		w.errors = append(w.errors, fmt.Sprintf("row %d (%s) is no longer in the sheet: its outcome was not written", rows[m.ID], m.ID))
	}
	// Every edit whose write the store did not report applied left its row as it was.
	applied := map[string]bool{}
	for _, a := range res.Applied {
		applied[a.Edit.ID] = true
	}
	why := map[string]string{}
	for _, c := range res.Conflicts {
		why[c.Edit.ID] = "its outcome was not written back: " + c.String()
	}
	for _, m := range res.Missing {
		why[m.ID] = "its outcome was not written back: the row is no longer in the sheet"
	}
	for _, e := range edits {
		if applied[e.ID] {
			continue
		}
		if why[e.ID] == "" {
			why[e.ID] = "the store did not confirm its outcome was written back"
		}
		w.unwritten[e.ID] = why[e.ID]
	}
	return stalled
}

// dryRun is the run that sends and writes nothing: what each planned row would send (its
// headers described, never their values) and every row queued.
func dryRun(c *Client, jobs []Job, sum model.ReplaySummary) model.ReplaySummary {
	for _, j := range jobs {
		sum.DryRun = append(sum.DryRun, model.PlannedCall{ID: j.ID, Row: j.Row, Method: j.Call.Method, URL: j.Call.URL,
			Key: j.Call.Key, Source: j.Call.Source, Headers: redact(c.Sources[j.Call.Source], c.getenv)})
		sum.Rows = append(sum.Rows, model.RowResult{ID: j.ID, Row: j.Row, Source: j.Call.Source, URL: j.Call.URL, Key: j.Call.Key, State: model.StateQueued})
	}
	sum.Counts[model.StateQueued] = len(jobs)
	return sum
}

// summarise gives every job its final state in sum, in plan order: a row never started (the
// run stopped first) is NotAttempted with the stop's reason, and a row the time budget cut
// short or kept from starting marks the run TimeUp.
func (r *runner) summarise(runCtx context.Context, jobs []Job, sent sent, sum *model.ReplaySummary) {
	results, started, cut := sent.results, sent.started, sent.cut
	for i, j := range jobs {
		rr := results[i]
		if !started[i] || rr.State == "" {
			rr = model.RowResult{ID: j.ID, Row: j.Row, Source: j.Call.Source, URL: j.Call.URL, Key: j.Call.Key, State: model.StateNotAttempted}
		}
		if rr.State == model.StateNotAttempted {
			rr.Detail = "not sent: " + stopReason(runCtx)
			sum.NotAttempted = append(sum.NotAttempted, j.ID)
			r.emit(rr, true, 0)
		}
		if (rr.State == model.StateNotAttempted || cut[i]) && errors.Is(context.Cause(runCtx), ErrTimeUp) {
			sum.TimeUp = true
		}
		if rr.State == model.StateRefused {
			sum.Refused = append(sum.Refused, model.Refusal{ID: j.ID, Row: j.Row, Reason: fmt.Sprintf("row %d: %s", j.Row, rr.Detail)})
		}
		sum.Counts[rr.State]++
		sum.Rows = append(sum.Rows, rr)
	}
}

// account adds what the write-back did to sum: its requests (one per Apply; a store that
// counts its own replaces the figure), the conflicts, errors and settled writes, and why each
// row whose outcome couldn't be recorded wasn't.
func (w *writer) account(sum *model.ReplaySummary) {
	sum.WriteRequests += w.requests
	sum.WriteConflicts = append(sum.WriteConflicts, w.conflicts...)
	sum.WriteErrors = append(sum.WriteErrors, w.errors...)
	sum.Recovered = append(sum.Recovered, w.recovered...)
	for i := range sum.Rows {
		if why, ok := w.unwritten[sum.Rows[i].ID]; ok {
			sum.Rows[i].WriteBack = why
		}
	}
}
