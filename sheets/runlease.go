package sheets

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
	"google.golang.org/api/googleapi"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// Replay leases (model.Leases) on the sheet are spreadsheet-level developer metadata, the
// same kind the journal's fence is (journal.go), and for the same reason: Sheets refuses to
// create metadata under an ID that exists, refusing the whole batch, so creating it is a
// compare-and-set nobody can undo from the browser.
//
//   - A row's lease is metadata under an ID computed from the tab and the row's effective key
//     (leaseID), key leaseKey, value the run's token: two runs leasing the same row compute
//     the same ID, and only one batch can create it.
//   - A run is metadata under its own random ID (runKey; the token is that ID in hex), its
//     value the run's writer (writerID: who, host, PID) and its lease, in Google's clock. A
//     row lease whose run is missing, ran out (plus leaseSkew) or is provably gone on this
//     host is taken over: deleted by a lookup of its ID and its old value (so a delete can't
//     remove a lease someone else has just taken) and created again, in one batch.
//   - A row lease is 16 characters of the spreadsheet's 30,000 of metadata (Google's limit
//     for all of a spreadsheet's metadata, journals included): a run leases at most what the
//     budget leaves (leaseBudget); the rest wait for the next run.
//   - Release deletes every lease of the run by one lookup (key and token) and the run's own
//     metadata; Renew rewrites the run's lease once half of it has gone.
const (
	leaseKey    = "triage.l"
	runKey      = "triage.run"
	leaseIDBase = 1 << 20
	// leaseIDEnd keeps leases and runs below the journal's IDs (1e9 and up: newEntry).
	leaseIDEnd = 1_000_000_000
	tokenLen   = 8
	leaseChars = len(leaseKey) + tokenLen
	// metaLimit is Google's limit on a spreadsheet's metadata; metaReserve what a lease
	// leaves of it for journal entries and runs.
	metaLimit   = 30000
	metaReserve = 6000
	// leaseTries bounds the rounds of read-then-create a Lease makes while other runs keep
	// taking the same rows.
	leaseTries = 5
)

// runMeta is a run's metadata value.
type runMeta struct {
	V      int       `json:"v"`
	Tab    string    `json:"tab"`
	Writer writerID  `json:"writer"`
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
}

// leaseID is a row's lease metadata ID: the same for every run that leases the row.
func leaseID(tab, key string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(tabKey(tab)))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(key))
	return leaseIDBase + int64(h.Sum64()%uint64(leaseIDEnd-leaseIDBase))
}

// runLease is a run this store holds leases for.
type runLease struct {
	id    int64
	meta  runMeta
	value string // meta as written, for the lookup that replaces it
}

// runLeases are the runs a store holds, by token.
type runLeases struct {
	mu   sync.Mutex
	runs map[string]*runLease
}

func token(id int64) string { return fmt.Sprintf("%08x", id) }

// Lease takes the replay lease of every key of tab that no other live run holds (see
// model.Leases). It reads the spreadsheet's metadata, then sends one batch creating the
// leases (and taking over those of gone runs); when another run's batch got there first
// (the batch is refused whole), it reads again and leases what is left, up to leaseTries
// times. A batch whose answer is lost is read back the same way: the leases carrying this
// run's token are this run's; one refused for another reason (429 over quota, a 5xx) is sent
// again, after a read, within the store's retry budget (RetryPolicy).
func (s *Store) Lease(ctx context.Context, tab string, keys []string) (model.Leases, error) {
	op := fmt.Sprintf("lease %s for a replay", words.Count(len(keys), "row", "rows"))
	if s.readOnly {
		return model.Leases{}, fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	tc, ok := s.tabConfig(tab)
	if !ok {
		return model.Leases{}, fmt.Errorf("%s: tab %q is not a configured tab (configured: %s)", op, tab, s.tabNames())
	}
	tab = tc.Name
	n, _ := rand.Int(rand.Reader, big.NewInt(leaseIDEnd-leaseIDBase))
	run := &runLease{id: leaseIDBase + n.Int64()}
	tok := token(run.id)
	wanted := slices.Compact(slices.Sorted(slices.Values(keys)))
	b := &budget{}
	var last error
	for refused := 0; refused < leaseTries; {
		meta, err := s.getMeta(ctx, op, b)
		if err != nil {
			return model.Leases{}, err
		}
		s.rememberSheetIDs(meta, true)
		now := s.gclock.now()
		st := readLeases(meta.DeveloperMetadata)
		if m, ok := st.byID[run.id]; ok && m.MetadataValue != run.value {
			if st.countOf(tok) > 0 {
				return model.Leases{}, fmt.Errorf("%s: this run's lease metadata (ID %d) was changed by someone else; nothing was sent", op, run.id)
			}
			// Another's metadata under the ID picked: pick again (nothing of ours landed).
			n, _ := rand.Int(rand.Reader, big.NewInt(leaseIDEnd-leaseIDBase))
			run.id = leaseIDBase + n.Int64()
			tok = token(run.id)
			refused++
			continue
		}
		res := model.Leases{Run: tok, Tab: tab, Held: map[string]model.LeaseHolder{}, Unleased: map[string]string{}}
		var reqs []*sheetsapi.Request
		slot := map[int64]string{} // lease ID → the key of this request it is for
		room := (metaLimit - metaReserve - st.chars) / leaseChars
		for _, k := range wanted {
			id := leaseID(tab, k)
			if other, ok := slot[id]; ok {
				res.Unleased[k] = fmt.Sprintf("its lease would share a slot with row %s's in this run; the next run sends it", other)
				continue
			}
			slot[id] = k
			m, held := st.byID[id]
			switch {
			case held && m.MetadataValue == tok:
				res.Taken = append(res.Taken, k) // an earlier batch of this call landed
				continue
			case held && m.MetadataKey == leaseKey:
				if h, live := st.live(m.MetadataValue, now); live {
					res.Held[k] = h
					continue
				}
			case held:
				res.Unleased[k] = fmt.Sprintf("its lease slot (metadata ID %d) holds metadata that is not a lease; the next run tries again", id)
				continue
			}
			if room <= 0 {
				res.Unleased[k] = fmt.Sprintf("the sheet's metadata has room for only so many leases at once (%d characters of Google's %d are in use); the next run sends it", st.chars, metaLimit)
				continue
			}
			room--
			if held {
				// Its run is gone: take it over, deleting exactly the lease we saw.
				reqs = append(reqs, deleteLookup(&sheetsapi.DeveloperMetadataLookup{MetadataId: id, MetadataKey: leaseKey, MetadataValue: m.MetadataValue}))
			}
			reqs = append(reqs, createMeta(id, leaseKey, tok))
			res.Taken = append(res.Taken, k)
		}
		if len(reqs) == 0 {
			if len(res.Taken) > 0 {
				s.leases.add(tok, run)
			}
			return res, nil
		}
		if run.value == "" {
			run.meta = runMeta{V: 1, Tab: tab, Writer: s.writer, Since: now, Until: now.Add(model.LeaseFor)}
			v, _ := json.Marshal(run.meta)
			run.value = string(v)
		}
		if _, ok := st.byID[run.id]; !ok {
			reqs = append([]*sheetsapi.Request{createMeta(run.id, runKey, run.value)}, reqs...)
		}
		// The runs that are over and hold nothing any more, so they don't fill the budget.
		for _, gone := range st.deadRuns(now) {
			reqs = append(reqs, deleteLookup(&sheetsapi.DeveloperMetadataLookup{MetadataId: gone.MetadataId, MetadataKey: runKey, MetadataValue: gone.MetadataValue}))
		}
		err = s.sendMeta(ctx, reqs)
		var gerr *googleapi.Error
		switch {
		case err == nil:
			b.answered()
			s.leases.add(tok, run)
			return res, nil
		case errors.As(err, &gerr) && gerr.Code == 400:
			// Another run created one of these IDs first: nothing of this batch landed.
			last = err
			refused++
			continue
		case outcomeUnknown(err):
			// Read back: what carries this token is this run's.
			last = err
			if ferr := s.backoff(ctx, op, b, err); ferr != nil {
				return model.Leases{}, ferr
			}
			continue
		default:
			// Refused whole, nothing applied (429: over quota, and the rest): within the
			// retry budget, read again and try again; past it, the error.
			if ferr := s.backoff(ctx, op, b, err); ferr != nil {
				return model.Leases{}, ferr
			}
			continue
		}
	}
	return model.Leases{}, fmt.Errorf("%s: the lease was refused %d times, as other runs kept leasing the same rows (last: %v); nothing was sent, run it again", op, leaseTries, last)
}

// Release ends a run's leases (every row's, and the run's own metadata), in one batch.
// Deleting by lookup can be sent again safely, so a lost answer is retried.
func (s *Store) Release(ctx context.Context, l model.Leases) error {
	run := s.leases.take(l.Run)
	if run == nil {
		return nil
	}
	op := "release the replay's leases"
	tok := l.Run
	return s.call(ctx, op, func(ctx context.Context) error {
		return s.sendMeta(ctx, []*sheetsapi.Request{
			deleteLookup(&sheetsapi.DeveloperMetadataLookup{MetadataKey: leaseKey, MetadataValue: tok}),
			deleteLookup(&sheetsapi.DeveloperMetadataLookup{MetadataId: run.id, MetadataKey: runKey}),
		})
	})
}

// Renew moves a run's lease on by model.LeaseFor once half of it has gone (else it sends
// nothing): a run that keeps writing back outcomes keeps its rows.
func (s *Store) Renew(ctx context.Context, l model.Leases) error {
	run := s.leases.get(l.Run)
	if run == nil {
		return nil
	}
	now := s.gclock.now()
	if now.Before(run.meta.Until.Add(-model.LeaseFor / 2)) {
		return nil
	}
	next := run.meta
	next.Until = now.Add(model.LeaseFor)
	v, _ := json.Marshal(next)
	// Delete exactly the value we wrote, then create the new one: if someone took the run's
	// metadata as gone meanwhile, the create is refused and the run learns it lost its rows.
	err := s.call(ctx, "renew the replay's leases", func(ctx context.Context) error {
		return s.sendMeta(ctx, []*sheetsapi.Request{
			deleteLookup(&sheetsapi.DeveloperMetadataLookup{MetadataId: run.id, MetadataKey: runKey, MetadataValue: run.value}),
			createMeta(run.id, runKey, string(v)),
		})
	})
	if err != nil {
		return err
	}
	s.leases.mu.Lock()
	run.meta, run.value = next, string(v)
	s.leases.mu.Unlock()
	return nil
}

// sendMeta sends a batch of metadata requests, asking for nothing back.
func (s *Store) sendMeta(ctx context.Context, reqs []*sheetsapi.Request) error {
	_, err := s.svc.Spreadsheets.BatchUpdate(s.id, &sheetsapi.BatchUpdateSpreadsheetRequest{Requests: reqs}).
		Fields("spreadsheetId").Context(ctx).Do()
	return err
}

func createMeta(id int64, key, value string) *sheetsapi.Request {
	return &sheetsapi.Request{CreateDeveloperMetadata: &sheetsapi.CreateDeveloperMetadataRequest{
		DeveloperMetadata: &sheetsapi.DeveloperMetadata{MetadataId: id, MetadataKey: key, MetadataValue: value,
			Location: &sheetsapi.DeveloperMetadataLocation{Spreadsheet: true}, Visibility: "DOCUMENT"}}}
}

func deleteLookup(l *sheetsapi.DeveloperMetadataLookup) *sheetsapi.Request {
	return &sheetsapi.Request{DeleteDeveloperMetadata: &sheetsapi.DeleteDeveloperMetadataRequest{
		DataFilter: &sheetsapi.DataFilter{DeveloperMetadataLookup: l}}}
}

// leaseState is the spreadsheet's metadata as a Lease reads it.
type leaseState struct {
	byID  map[int64]*sheetsapi.DeveloperMetadata
	runs  map[string]*sheetsapi.DeveloperMetadata // by token
	held  map[string]int                          // row leases by token
	chars int
}

func readLeases(list []*sheetsapi.DeveloperMetadata) *leaseState {
	st := &leaseState{byID: map[int64]*sheetsapi.DeveloperMetadata{}, runs: map[string]*sheetsapi.DeveloperMetadata{}, held: map[string]int{}}
	for _, m := range list {
		if m == nil {
			continue
		}
		st.byID[m.MetadataId] = m
		st.chars += len([]rune(m.MetadataKey)) + len([]rune(m.MetadataValue))
		switch m.MetadataKey {
		case runKey:
			st.runs[token(m.MetadataId)] = m
		case leaseKey:
			st.held[m.MetadataValue]++
		}
	}
	return st
}

func (st *leaseState) countOf(tok string) int { return st.held[tok] }

// live says whether the run of a row lease's token is running, and who it is.
func (st *leaseState) live(tok string, now time.Time) (model.LeaseHolder, bool) {
	m, ok := st.runs[tok]
	if !ok {
		return model.LeaseHolder{}, false // its run is gone: released half-way, or never made
	}
	var rm runMeta
	if json.Unmarshal([]byte(m.MetadataValue), &rm) != nil {
		return model.LeaseHolder{}, false
	}
	if !now.Before(rm.Until.Add(leaseSkew)) || rm.Writer.gone() {
		return model.LeaseHolder{}, false
	}
	by := rm.Writer.Who
	if by == "" {
		by = "triage"
	}
	if rm.Writer.Host != "" && !strings.Contains(by, "@") {
		by += "@" + rm.Writer.Host
	}
	return model.LeaseHolder{By: by, Since: rm.Since, Until: rm.Until}, true
}

// deadRuns are runs that ran out or are gone and hold no row lease.
func (st *leaseState) deadRuns(now time.Time) []*sheetsapi.DeveloperMetadata {
	var out []*sheetsapi.DeveloperMetadata
	for tok, m := range st.runs {
		if st.held[tok] > 0 {
			continue
		}
		if _, live := st.live(tok, now); !live {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b *sheetsapi.DeveloperMetadata) int { return int(a.MetadataId - b.MetadataId) })
	return out
}

func (r *runLeases) add(tok string, run *runLease) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs == nil {
		r.runs = map[string]*runLease{}
	}
	r.runs[tok] = run
}

func (r *runLeases) get(tok string) *runLease {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[tok]
}

func (r *runLeases) take(tok string) *runLease {
	r.mu.Lock()
	defer r.mu.Unlock()
	run := r.runs[tok]
	delete(r.runs, tok)
	return run
}
