package replay

import (
	"context"
	"sync"

	"github.com/triage-dev/triage/model"
)

// sent is what the lanes made of each job, by its index in the plan.
type sent struct {
	results []model.RowResult
	started []bool // taken up by its lane (a row never taken up is NotAttempted)
	cut     []bool // its retries cut short by a halt or a stop
}

// sendLanes sends the jobs, within conc (RunOptions.Concurrency) and each source's bounds,
// until every lane is over or runCtx ends; from the budget's stop point on, no request
// leaves (cancel is told ErrTimeUp).
//
// One lane per source, in order of first appearance; each lane works through its rows in
// plan order with up to twice the bound it shares rows in progress (or the source's own
// bound, which then also bounds its requests in flight: see runBounds). Only a request in
// flight holds one of the run's slots (and of the pool its source shares, if any): rows
// waiting for their source's rate or sleeping in backoff hold none, so a throttled source
// doesn't slow the others and a sleeping row doesn't idle a slot. Each lane also has a
// probe (see probe): until its source has answered a call of this run with success, one
// request of the lane is in flight at a time, whatever its bounds.
func (r *runner) sendLanes(runCtx context.Context, jobs []Job, conc int, budget timeBudget, cancel context.CancelCauseFunc, w *writer) sent {
	s := sent{results: make([]model.RowResult, len(jobs)), started: make([]bool, len(jobs)), cut: make([]bool, len(jobs))}
	var order []string
	lanes := map[string][]int{}
	for i, j := range jobs {
		if _, ok := lanes[j.Call.Source]; !ok {
			order = append(order, j.Call.Source)
		}
		lanes[j.Call.Source] = append(lanes[j.Call.Source], i)
	}
	b := runBounds(conc, order, r.c.Sources)
	runSem := make(chan struct{}, b.run)
	var wg sync.WaitGroup
	for _, name := range order {
		idx := lanes[name]
		width := b.width[name]
		laneSem := b.shared[name]
		pr := newProbe()
		// A request takes its lane's slot (when it has one) first, then the run's: none
		// holds a run slot while it waits for its lane.
		acquire := func(ctx context.Context) (func(), error) {
			releaseLane := func() {}
			if laneSem != nil {
				r, err := take(ctx, laneSem)
				if err != nil {
					return nil, err
				}
				releaseLane = r
			}
			releaseRun, err := take(ctx, runSem)
			if err != nil {
				releaseLane()
				return nil, err
			}
			// The last step before a request leaves: from the stop point on, none does.
			if budget.up() {
				cancel(ErrTimeUp)
				releaseRun()
				releaseLane()
				return nil, ErrTimeUp
			}
			return func() { releaseRun(); releaseLane() }, nil
		}
		var next int
		var nmu sync.Mutex
		for range width {
			wg.Go(func() {
				for {
					if runCtx.Err() != nil {
						return
					}
					nmu.Lock()
					if next >= len(idx) {
						nmu.Unlock()
						return
					}
					i := idx[next]
					next++
					nmu.Unlock()
					s.started[i] = true
					s.results[i], s.cut[i] = r.one(runCtx, jobs[i], pr, acquire, w)
				}
			})
		}
	}
	wg.Wait()
	return s
}

// DefaultConcurrency is the requests in flight at once of a run, and of each of its sources,
// when neither RunOptions.Concurrency nor the source says.
const DefaultConcurrency = 4

// bounds are a run's limits on requests in flight (see RunOptions.Concurrency).
type bounds struct {
	// run bounds the run's requests in flight.
	run int
	// width is how many rows of a source are in progress at once: its own Concurrency when it
	// has one (which then bounds its requests in flight too), else twice the bound it shares,
	// so that rows sleeping in backoff don't idle its slots.
	width map[string]int
	// shared are the slots a source's requests take besides the run's, where the run's don't
	// bound them: the one pool the sources without their own Concurrency share when no bound
	// was given (nil: none).
	shared map[string]chan struct{}
}

// runBounds works out a run's bounds for the sources in names: given (conc > 0), conc bounds
// the run and caps every source's own Concurrency; unset, each source with its own
// Concurrency gets it, those without share DefaultConcurrency, and the run's bound is the
// sum; both at most MaxConcurrency.
func runBounds(conc int, names []string, sources map[string]*Source) bounds {
	b := bounds{width: map[string]int{}, shared: map[string]chan struct{}{}}
	given := conc > 0
	base := DefaultConcurrency
	if given {
		base = min(conc, MaxConcurrency)
		b.run = base
	}
	var pool chan struct{}
	for _, name := range names {
		if src := sources[name]; src != nil && src.Concurrency > 0 {
			own := min(src.Concurrency, MaxConcurrency)
			if given {
				own = min(own, base)
			} else {
				b.run += own
			}
			b.width[name] = own
			continue
		}
		b.width[name] = 2 * base
		if !given {
			if pool == nil {
				pool = make(chan struct{}, base)
				b.run += base
			}
			b.shared[name] = pool
		}
	}
	b.run = max(min(b.run, MaxConcurrency), 1)
	return b
}

// take waits for a slot of sem (or ctx's end) and returns its release.
func take(ctx context.Context, sem chan struct{}) (func(), error) {
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// probe is a source's admission in one run. Until the source has answered a request of this
// run with success (delivered or duplicate), at most one request to it is in flight, so a
// broken integration (a wrong secret, an endpoint gone) costs one call before its systemic
// answer halts the run, not one per slot; the first success opens the probe, and from then on
// only the source's bounds (see runBounds) limit it. The probe is taken per request, not per
// row: a row sleeping in backoff lets the next row's request go, one at a time.
//
// Only a success opens it. A retryable or deferred answer says nothing about whether calls
// are accepted, and a rejection is an answer about one row (a validation error, a 410) that a
// destination may give before it looks at the credential: neither shows that the source's
// other calls would not all get the same systemic answer.
type probe struct {
	one    chan struct{} // the one request in flight while shut
	opened chan struct{} // closed by the first success
	once   sync.Once
}

func newProbe() *probe { return &probe{one: make(chan struct{}, 1), opened: make(chan struct{})} }

// admit waits until a request of the source may go ahead: at once when the probe is open,
// else for the one request in flight to end (or the probe to open, or ctx's end). It returns
// the admission's release.
func (p *probe) admit(ctx context.Context) (func(), error) {
	select {
	case <-p.opened:
		return func() {}, nil
	default:
	}
	select {
	case <-p.opened:
		return func() {}, nil
	case p.one <- struct{}{}:
		return func() { <-p.one }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// settle opens the probe on a success.
func (p *probe) settle(res Result) {
	if res.Outcome.Success() {
		p.once.Do(func() { close(p.opened) })
	}
}
