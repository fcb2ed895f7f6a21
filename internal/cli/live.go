package cli

import (
	"context"
	"time"

	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/tui"
)

// changeNotices is a database's changes as "look again" signals, for the TUI's feed
// (liveUpdates) and serve's hub (serve.HubOptions.Changes): one value per burst of notices
// (postgres.Store.Watch: a trigger and LISTEN/NOTIFY), so an idle reader sends no queries. A
// lost watch is watched again (waiting 1 s, doubling to 30 s, between tries), followed by one
// value for what was missed. The channel closes when ctx ends. The first watch is made before
// it returns, so a database that can't be watched is an error here, not a silent poll.
func changeNotices(ctx context.Context, st *postgres.Store) (<-chan struct{}, error) {
	changes, err := st.Watch(ctx)
	if err != nil {
		return nil, err
	}
	out := make(chan struct{})
	signal := func() bool {
		select {
		case out <- struct{}{}:
			return true
		case <-ctx.Done():
			return false
		}
	}
	go func() {
		defer close(out)
		wait := time.Second
		for {
			for range changes {
				drain(changes)
				if !signal() {
					return
				}
				wait = time.Second
			}
			// The watch ended: ctx is done, or the connection was lost.
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
				if changes, err = st.Watch(ctx); err == nil {
					break
				}
				wait = min(2*wait, 30*time.Second)
			}
			if !signal() {
				return
			}
		}
	}()
	return out, nil
}

// liveUpdates is the TUI's feed on a database store (tui.Options.Updates): live, not polled.
// Every burst of changes (changeNotices) is one load, pushed to the TUI; an idle TUI sends no
// queries. The channel closes when ctx ends.
func liveUpdates(ctx context.Context, st *postgres.Store) (<-chan *tui.Prepared, error) {
	changes, err := changeNotices(ctx, st)
	if err != nil {
		return nil, err
	}
	out := make(chan *tui.Prepared)
	go func() {
		defer close(out)
		for range changes {
			if !push(ctx, out, st) {
				return
			}
		}
	}()
	return out, nil
}

// drain takes the notices already queued, so a burst (a replay's write-back) is one load.
func drain(changes <-chan postgres.Change) {
	for {
		select {
		case _, ok := <-changes:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// push loads and hands the result (or its error) to the TUI; false when ctx ended.
func push(ctx context.Context, out chan<- *tui.Prepared, st *postgres.Store) bool {
	wb, err := st.Load(ctx)
	if ctx.Err() != nil {
		return false
	}
	select {
	case out <- tui.Prepare(wb, err):
		return true
	case <-ctx.Done():
		return false
	}
}
