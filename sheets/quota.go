package sheets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/triage-dev/triage/internal/backoff"
	"github.com/triage-dev/triage/model"
)

// Google's default Sheets API quotas: requests per minute per user, reads and writes counted
// apart (per project they are 300), refilled each minute. A request past one is answered 429
// RESOURCE_EXHAUSTED, and nothing is done.
const (
	DefaultQuotaPerMinute = 60
	DefaultQuotaBudget    = 2 * time.Minute
)

// quotaWindow is the span Google counts a per-minute quota over.
const quotaWindow = time.Minute

// Pacer keeps one client under the Sheets API's per-minute quotas and waits out the quota
// answers it gets anyway (another client of the same user, another process), so that a
// command, a replay's write-back or a refresh loop goes on instead of failing on the first
// 429. Every request through Transport is counted as a read or a write; one that would be
// past PerMinute in the last minute waits until the oldest of them is a minute old. A 429 is
// waited out (its Retry-After, else until the next quota minute, with jitter) and sent again,
// for at most Budget of waiting per operation (WithQuotaBudget; else per request), and every
// wait is told to OnWait first. A Pacer is safe for concurrent use: `triage serve` holds one
// for all its sessions, so together they stay under the quota of the one credential.
type Pacer struct {
	// PerMinute is the reads (and, apart, the writes) a minute to stay under; 0 means
	// DefaultQuotaPerMinute, a negative number no pacing (429s are still waited out).
	PerMinute int
	// Budget is the most one operation waits on the quota in all (0: DefaultQuotaBudget).
	Budget time.Duration
	// OnWait, when set, is told of each wait before it starts.
	OnWait func(QuotaWait)
	// Now and Sleep are the clock (default: time.Now and a timer); tests pass a fake one.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error

	mu           sync.Mutex
	reads, write []time.Time // the sends of the last minute, oldest first
}

// QuotaWait is one wait for the quota, as told to Pacer.OnWait.
type QuotaWait struct {
	// Limit is the quota, as a person reads it ("writes per minute per user").
	Limit string
	// Wait is how long it waits now; Answered says Google answered 429 (else the wait is
	// triage's own pacing, before sending).
	Wait     time.Duration
	Answered bool
}

// String is the line a person sees: "Sheets quota reached (writes per minute per user):
// waiting 41 s".
func (w QuotaWait) String() string {
	what := "Sheets quota reached"
	if !w.Answered {
		what = "pacing under the Sheets quota"
	}
	return fmt.Sprintf("%s (%s): waiting %s", what, w.Limit, waitText(w.Wait))
}

func waitText(d time.Duration) string {
	if d < time.Second {
		return "under a second"
	}
	return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
}

// quotaSpend is an operation's quota waiting so far (WithQuotaBudget).
type quotaSpend struct {
	mu     sync.Mutex
	budget time.Duration
	spent  time.Duration
}

type quotaKey struct{}

// WithQuotaBudget returns a context whose requests share one budget of quota waiting: a
// command waits at most d on the quota in all, however many requests it sends. 0 means the
// Pacer's Budget.
func WithQuotaBudget(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, quotaKey{}, &quotaSpend{budget: d})
}

// WithoutQuotaBudget returns a context whose requests each have a budget of their own (the
// Pacer's): a TUI or a server, whose requests are many operations over hours, not one.
func WithoutQuotaBudget(ctx context.Context) context.Context {
	return context.WithValue(ctx, quotaKey{}, (*quotaSpend)(nil))
}

// ErrQuotaBudget marks a quota answer (429) that was not waited out: the wait would have gone
// past the budget. The request was not done.
var ErrQuotaBudget = fmt.Errorf("the Sheets quota was still reached after waiting the quota budget")

func (p *Pacer) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Pacer) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	return backoff.Sleep(ctx, d)
}

func (p *Pacer) perMinute() int {
	if p.PerMinute == 0 {
		return DefaultQuotaPerMinute
	}
	return p.PerMinute
}

// take waits until a request of the kind fits under the quota, and counts it.
func (p *Pacer) take(ctx context.Context, write bool) error {
	limit := p.perMinute()
	for {
		p.mu.Lock()
		q := &p.reads
		if write {
			q = &p.write
		}
		now := p.now()
		cut := now.Add(-quotaWindow)
		i := 0
		for i < len(*q) && !(*q)[i].After(cut) {
			i++
		}
		*q = (*q)[i:]
		if limit < 0 || len(*q) < limit {
			*q = append(*q, now)
			p.mu.Unlock()
			return nil
		}
		wait := (*q)[0].Add(quotaWindow).Sub(now)
		p.mu.Unlock()
		// Pacing is not charged to the budget: it always ends, and keeps the quota answers
		// (which are) away.
		if p.OnWait != nil {
			p.OnWait(QuotaWait{Limit: limitName(write), Wait: wait})
		}
		if err := p.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// nextMinute is how long until the quota of the kind has room again by this client's own
// count (the oldest send of the last minute a minute old), at least a second, with up to 10%
// of a minute's jitter so that clients that met the quota together don't return together.
func (p *Pacer) nextMinute(write bool) time.Duration {
	p.mu.Lock()
	q := p.reads
	if write {
		q = p.write
	}
	wait := quotaWindow
	if len(q) > 0 {
		wait = q[0].Add(quotaWindow).Sub(p.now())
	}
	p.mu.Unlock()
	wait = max(wait, time.Second)
	return wait + time.Duration(rand.Int64N(int64(quotaWindow/10)))
}

// wait spends w.Wait of the budget, telling OnWait, or says the budget is spent.
func (p *Pacer) wait(ctx context.Context, spend *quotaSpend, w QuotaWait) error {
	budget := p.Budget
	if budget <= 0 {
		budget = DefaultQuotaBudget
	}
	if spend != nil {
		spend.mu.Lock()
		if spend.budget > 0 {
			budget = spend.budget
		}
		if spend.spent+w.Wait > budget {
			spend.mu.Unlock()
			return fmt.Errorf("%w (%s; waited %s of %s)", ErrQuotaBudget, w.Limit, waitText(spend.spent), budget)
		}
		spend.spent += w.Wait
		spend.mu.Unlock()
	} else if w.Wait > budget {
		return fmt.Errorf("%w (%s; a wait of %s is past %s)", ErrQuotaBudget, w.Limit, waitText(w.Wait), budget)
	}
	if p.OnWait != nil {
		p.OnWait(w)
	}
	return p.sleep(ctx, w.Wait)
}

func limitName(write bool) string {
	if write {
		return "writes per minute per user"
	}
	return "reads per minute per user"
}

// isDriveRequest says r is a Drive API request (the change check's files.get): Drive has
// quotas of its own, far above the Sheets API's, so it is not paced under them (a 429 from it
// is still waited out).
func isDriveRequest(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/drive/")
}

// isWriteRequest says which quota a request counts against, as Google counts them: a GET
// and the batchGet (and data-filter) reads are reads, everything else a write.
func isWriteRequest(r *http.Request) bool {
	if r.Method == http.MethodGet {
		return false
	}
	p := r.URL.Path
	for _, read := range []string{":batchGet", ":batchGetByDataFilter", ":getByDataFilter", "developerMetadata:search"} {
		if strings.HasSuffix(p, read) {
			return false
		}
	}
	return true
}

// Transport is base (nil: http.DefaultTransport) paced under the quota, with quota answers
// waited out.
func (p *Pacer) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &pacedTransport{p: p, base: base}
}

type pacedTransport struct {
	p    *Pacer
	base http.RoundTripper
}

// RoundTrip sends r under the quota; a 429 is waited out and r sent again while the budget
// lasts. A 429 it does not wait out comes back marked (ErrQuotaBudget in the error the
// store's retry reads), so nothing above retries it again.
func (t *pacedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	spend, _ := ctx.Value(quotaKey{}).(*quotaSpend)
	if spend == nil {
		spend = &quotaSpend{}
	}
	write := isWriteRequest(r)
	paced := !isDriveRequest(r)
	for attempt := 0; ; attempt++ {
		if paced {
			if err := t.p.take(ctx, write); err != nil {
				return nil, err
			}
		}
		req := r
		if attempt > 0 {
			req = r.Clone(ctx)
			if r.Body != nil && r.Body != http.NoBody {
				body, err := r.GetBody()
				if err != nil {
					return nil, err
				}
				req.Body = body
			}
		}
		resp, err := t.base.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests {
			return resp, err
		}
		if r.Body != nil && r.Body != http.NoBody && r.GetBody == nil {
			return resp, nil // can't be sent again: the store's retry decides
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		w := QuotaWait{Limit: quotaLimitOf(body, write), Answered: true}
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), t.p.now()); ok {
			w.Wait = d
		} else {
			w.Wait = t.p.nextMinute(write)
		}
		if err := t.p.wait(ctx, spend, w); err != nil {
			// The 429 goes back as it came, marked so that the store doesn't retry it.
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.Header = resp.Header.Clone()
			resp.Header.Set(budgetSpentHeader, err.Error())
			return resp, nil
		}
	}
}

// budgetSpentHeader marks a 429 the pacer gave up waiting for (its value says why).
const budgetSpentHeader = "X-Triage-Quota-Budget"

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// quotaLimitOf names the quota a 429's body says was reached (its ErrorInfo's quota_limit:
// "WriteRequestsPerMinutePerUser"), else the kind of the request.
func quotaLimitOf(body []byte, write bool) string {
	var doc struct {
		Error struct {
			Details []struct {
				Metadata map[string]string `json:"metadata"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &doc) == nil {
		for _, d := range doc.Error.Details {
			if l := d.Metadata["quota_limit"]; l != "" {
				return quotaLimitText(l)
			}
		}
	}
	return limitName(write)
}

// quotaLimitText is a quota's name as a person reads it: "WriteRequestsPerMinutePerUser" is
// "writes per minute per user".
func quotaLimitText(l string) string {
	known := map[string]string{
		"ReadRequestsPerMinutePerUser":     "reads per minute per user",
		"WriteRequestsPerMinutePerUser":    "writes per minute per user",
		"ReadRequestsPerMinutePerProject":  "reads per minute per project",
		"WriteRequestsPerMinutePerProject": "writes per minute per project",
	}
	if t, ok := known[l]; ok {
		return t
	}
	return model.SanitizeLine(l)
}
