package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/triage-dev/triage/internal/backoff"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// Call is one dead-lettered call to replay.
type Call struct {
	// Key is the call's idempotency key; every attempt carries it.
	Key string
	// Source names the configured source (Client.Sources) the call belongs to.
	Source string
	// Method is the HTTP method (default POST).
	Method string
	// URL is the destination; it must lie under the source's url_prefixes.
	URL string
	// Body is the payload exactly as dead-lettered; the key is inserted only where the source
	// wants it in the body and the body lacks it.
	Body []byte
}

// Attempt is one request of a call (the apps-script hop belongs to the attempt it follows).
type Attempt struct {
	// N is the 1-based attempt number.
	N int
	// Status is the HTTP status of the answer that decided the outcome (the echo's, after an
	// apps-script hop); 0 when there was none (timeout, network error).
	Status int
	// Err is what went wrong, "" when the attempt was delivered.
	Err string
	// Outcome is the attempt's classification.
	Outcome Outcome
	// Wait is how long the client waited after this attempt before the next one (0 when
	// there was no next one).
	Wait time.Duration
}

// Result is what became of a call after all its attempts.
type Result struct {
	// Outcome is the final outcome; 0 when nothing was sent (the run stopped first).
	Outcome Outcome
	// Attempts lists every request sent, in order.
	Attempts []Attempt
	// Status is the last answer's HTTP status (0 if none).
	Status int
	// Detail says in one line what happened and, for failures, what to check:
	// "401 from crm: check the CRM_TOKEN secret".
	Detail string
	// Deferred is set when the last answer asked (Retry-After) for a wait beyond Client.Cap:
	// the row stays dead for a later run instead of holding the run up.
	Deferred bool
	// RetryAfter is the wait the destination asked for, when it sent a usable Retry-After.
	RetryAfter time.Duration
	// Interrupted is set when the run was cancelled or halted before the call's attempts were
	// used up (the outcome is then that of the last attempt sent, if any).
	Interrupted bool
}

// Client sends calls: it enforces the destination allowlist, carries the key, retries with
// full-jitter backoff and Retry-After, rate-limits per source and classifies answers. Set the
// fields, then use it from any number of goroutines; don't change or copy it after first use.
type Client struct {
	// HTTP is the transport (default: a plain http.Client). The Client uses a copy whose
	// CheckRedirect refuses every redirect; it follows only the apps-script hop itself.
	HTTP *http.Client
	// Sources are the configured sources by name.
	Sources map[string]*Source
	// Getenv reads "env:NAME" header values at send time (default os.Getenv).
	Getenv func(string) string
	// Base and Cap shape the backoff (default 1s and 30s): before attempt n+1 the client waits
	// uniform(0, min(Cap, Base·2^(n-1))). A Retry-After is honoured up to Cap; beyond it the
	// call is deferred.
	Base, Cap time.Duration
	// Rand returns a float in [0, 1) for the jitter (default math/rand/v2).
	Rand func() float64
	// Now is the clock for Retry-After dates, replayed_at, key lifetimes and a run's deadline
	// (RunOptions.Deadline) (default time.Now).
	Now func() time.Time

	once     sync.Once
	hc       *http.Client
	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

func (c *Client) init() {
	c.once.Do(func() {
		hc := &http.Client{}
		if c.HTTP != nil {
			cp := *c.HTTP
			hc = &cp
		}
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		c.hc = hc
		c.limiters = map[string]*rate.Limiter{}
	})
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) getenv(k string) string {
	if c.Getenv != nil {
		return c.Getenv(k)
	}
	return os.Getenv(k)
}

func (c *Client) base() time.Duration {
	if c.Base > 0 {
		return c.Base
	}
	return time.Second
}

func (c *Client) cap() time.Duration {
	if c.Cap > 0 {
		return c.Cap
	}
	return 30 * time.Second
}

func (c *Client) rand() float64 {
	var f float64
	if c.Rand != nil {
		f = c.Rand()
	} else {
		f = rand.Float64()
	}
	if f < 0 || f != f {
		return 0
	}
	if f >= 1 {
		return 1
	}
	return f
}

// Backoff is the full-jitter wait before attempt n+1 after attempt n failed:
// uniform(0, min(Cap, Base·2^(n-1))).
func (c *Client) Backoff(n int) time.Duration {
	return backoff.FullJitter(backoff.Ceil(n, c.base(), c.cap()), c.rand())
}

// limiter returns the source's rate limiter, nil when it has no rate.
func (c *Client) limiter(src *Source) *rate.Limiter {
	if src.RatePerMinute <= 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.limiters[src.Name]
	if l == nil {
		l = rate.NewLimiter(rate.Every(time.Minute/time.Duration(src.RatePerMinute)), 1)
		c.limiters[src.Name] = l
	}
	return l
}

// hooks let the runner take part in a call's attempts.
type hooks struct {
	// admit blocks until a request of the call's source may go ahead, before the source's
	// rate is waited for, and returns its release (the runner's probe: one request in flight
	// until the source has answered with success).
	admit func(ctx context.Context) (func(), error)
	// acquire blocks until a request may be in flight and returns its release.
	acquire func(ctx context.Context) (func(), error)
	// sending is told right before attempt n leaves.
	sending func(n int)
	// settle is told the final result (interrupted ones included) before the last request's
	// slot is released.
	settle func(Result)
}

// Do sends a call: every attempt until an outcome other than retryable, the source's
// max_attempts, or a Retry-After beyond the cap. Cancelling ctx stops waits (rate limit,
// backoff) at once and starts nothing new; a request already in flight finishes or times out
// (per-attempt timeout) so its answer is known.
func (c *Client) Do(ctx context.Context, call Call) Result {
	return c.do(ctx, call, hooks{})
}

// do is Do with the runner's hooks. Every Result it gives out (to settle and to its caller)
// has its text capped (capResult): a destination's answer may be any size, and this text is
// what a cell, a halt banner and a log line hold.
func (c *Client) do(ctx context.Context, call Call, h hooks) Result {
	if settle := h.settle; settle != nil {
		h.settle = func(r Result) { settle(capResult(r)) }
	}
	return capResult(c.send(ctx, call, h))
}

func (c *Client) send(ctx context.Context, call Call, h hooks) Result {
	c.init()
	req, refusal := c.prepare(call)
	if refusal != nil {
		return *refusal
	}
	lim := c.limiter(req.src)
	maxN := req.src.maxAttempts()
	var res Result
	for n := 1; n <= maxN; n++ {
		release, ok := c.slot(ctx, lim, h)
		if !ok {
			res.Interrupted = true
			break
		}
		if h.sending != nil {
			h.sending(n)
		}
		a := c.attempt(ctx, req.src, req.method, call.URL, req.body, req.hdr)
		if a.Outcome == Refused {
			// The request could not even be built: nothing left.
			release()
			return Result{Outcome: Refused, Attempts: res.Attempts, Detail: a.detail}
		}
		a.N = n
		res.Attempts = append(res.Attempts, a.Attempt)
		res.Outcome, res.Status, res.Detail = a.Outcome, a.Status, a.detail
		res.RetryAfter, res.Deferred = 0, false
		final := a.Outcome != Retryable || n == maxN
		wait := c.Backoff(n)
		if a.Outcome == Retryable && a.hasRetryAfter {
			res.RetryAfter = a.retryAfter
			wait = a.retryAfter
			if a.retryAfter > c.cap() {
				res.Deferred, final = true, true
				res.Detail = fmt.Sprintf("%s; it asked to retry in %s, beyond the %s cap: deferred to a later run", a.detail, a.retryAfter, c.cap())
			}
		}
		if final {
			if res.Outcome == Retryable && !res.Deferred {
				res.Detail = fmt.Sprintf("%s (after %s)", res.Detail, words.Count(n, "attempt", "attempts"))
			}
			// The final result is settled while this request still holds its slot, so a
			// halt it causes is in force before another request can take the slot.
			if h.settle != nil {
				h.settle(res)
			}
			release()
			return res
		}
		release()
		res.Attempts[len(res.Attempts)-1].Wait = wait
		if err := backoff.Sleep(ctx, wait); err != nil {
			res.Attempts[len(res.Attempts)-1].Wait = 0
			res.Interrupted = true
			break
		}
	}
	why := "cancelled"
	switch {
	case errors.Is(context.Cause(ctx), ErrHalted):
		why = "the run halted"
	case errors.Is(context.Cause(ctx), ErrWriteBackStalled):
		why = "the run stopped: the sheet kept moving under its write-back"
	case errors.Is(context.Cause(ctx), ErrTimeUp):
		why = "the run's time was nearly up"
	}
	if len(res.Attempts) == 0 {
		res.Detail = "not sent: " + why
	} else {
		res.Detail += "; not retried: " + why
	}
	if h.settle != nil {
		h.settle(res)
	}
	return res
}

// prepared is a call made ready to send: its source, method, body (carrying the key) and
// headers.
type prepared struct {
	src    *Source
	method string
	body   []byte
	hdr    http.Header
}

// prepare checks a call before anything is sent and builds its request's parts, or returns
// the result that refuses it: a source not configured or not allowing the URL (invariant 8),
// a key no header can carry (invariant 3: it is no attempt, and says nothing about the
// destination, so it can't halt a run), a bad method or body, a missing secret (systemic:
// every call of the source would go out without it).
func (c *Client) prepare(call Call) (prepared, *Result) {
	refuse := func(o Outcome, detail string) (prepared, *Result) {
		return prepared{}, &Result{Outcome: o, Detail: detail}
	}
	src := c.Sources[call.Source]
	if src == nil {
		return refuse(Refused, fmt.Sprintf("source %q is not configured: add [sources.%s] with url_prefixes", call.Source, call.Source))
	}
	if err := src.Validate(); err != nil {
		return refuse(Refused, err.Error())
	}
	if ok, why := allowed(call.URL, src.URLPrefixes); !ok {
		return refuse(Refused, fmt.Sprintf("source %s: %s; not contacted", src.Name, why))
	}
	if strings.TrimSpace(call.Key) == "" {
		return refuse(Refused, "the call has no idempotency key; not sent")
	}
	if err := model.CheckKey(call.Key); err != nil {
		return refuse(Refused, fmt.Sprintf("%v; fix the row's key; not sent", err))
	}
	method, err := normMethod(call.Method)
	if err != nil {
		return refuse(Refused, err.Error())
	}
	body, err := prepareBody(src, call.Body, call.Key)
	if err != nil {
		return refuse(Refused, err.Error())
	}
	hdr, o, refusal := c.headers(src, call.Key, body)
	if o != 0 {
		return refuse(o, refusal)
	}
	return prepared{src: src, method: method, body: body, hdr: hdr}, nil
}

// slot waits for the runner's admission (admit), the rate limit and a request slot (the
// runner's acquire), in that order, and returns the release of what it took; ok is false
// when the run was cancelled or halted meanwhile. Admission comes before the rate, so a
// request waiting to be admitted holds none of its source's rate. The last check before a
// request leaves: a halt or a cancel that came while it waited stops the attempt.
func (c *Client) slot(ctx context.Context, lim *rate.Limiter, h hooks) (release func(), ok bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	admitted := func() {}
	if h.admit != nil {
		r, err := h.admit(ctx)
		if err != nil {
			return nil, false
		}
		admitted = r
	}
	if lim != nil {
		if err := lim.Wait(ctx); err != nil {
			admitted()
			return nil, false
		}
	}
	release = admitted
	if h.acquire != nil {
		r, err := h.acquire(ctx)
		if err != nil {
			admitted()
			return nil, false
		}
		release = func() { r(); admitted() }
	}
	if ctx.Err() != nil {
		release()
		return nil, false
	}
	return release, true
}

// ErrHalted is the cause of a run's context once its halt switch has tripped.
var ErrHalted = errors.New("replay run halted")

func normMethod(m string) (string, error) {
	m = strings.ToUpper(strings.TrimSpace(m))
	if m == "" {
		return http.MethodPost, nil
	}
	for _, r := range m {
		if r < 'A' || r > 'Z' {
			return "", fmt.Errorf("method %q is not an HTTP method; not sent", m)
		}
	}
	return m, nil
}

// headers builds the request headers of a source's calls: its configured headers ("env:"
// values resolved now), the key header(s) and a Content-Type for the body. When it can't, it
// returns why and the outcome of the call that was not sent: Systemic for a secret missing
// from the environment, Refused for a name or value no HTTP request can carry (net/http
// would refuse it at send time, which looked like a network error).
func (c *Client) headers(src *Source, key string, body []byte) (http.Header, Outcome, string) {
	h := http.Header{}
	if len(body) > 0 {
		if json.Valid(body) {
			h.Set("Content-Type", "application/json")
		} else {
			h.Set("Content-Type", "text/plain; charset=utf-8")
		}
	}
	h.Set("Accept", "application/json, */*;q=0.5")
	for name, v := range src.Headers {
		if err := model.CheckHeaderName(name); err != nil {
			return nil, Refused, fmt.Sprintf("source %s: %v; fix [sources.%s.headers]; not sent", src.Name, err, src.Name)
		}
		v = strings.TrimSpace(v)
		if env, ok := strings.CutPrefix(v, model.EnvPrefix); ok {
			val := c.getenv(env)
			if val == "" {
				return nil, Systemic, fmt.Sprintf("source %s: header %s reads the environment variable %s, which is not set: export it and run again", src.Name, name, env)
			}
			if err := model.CheckHeaderValue(val); err != nil {
				return nil, Refused, fmt.Sprintf("source %s: header %s reads the environment variable %s, whose %v; fix the variable (a trailing \\r often comes from a file with Windows line endings); not sent", src.Name, name, env, err)
			}
			v = val
		} else if err := model.CheckHeaderValue(v); err != nil {
			return nil, Refused, fmt.Sprintf("source %s: header %s: %v; fix [sources.%s.headers]; not sent", src.Name, name, err, src.Name)
		}
		h.Set(name, v)
	}
	for _, k := range src.keySpecs() {
		if strings.EqualFold(k.In, KeyInHeader) {
			if err := model.CheckHeaderName(k.Name); err != nil {
				return nil, Refused, fmt.Sprintf("source %s: key placement: %v; not sent", src.Name, err)
			}
			h.Set(k.Name, key)
		}
	}
	return h, 0, ""
}

// attemptResult is an Attempt plus what the retry loop needs.
type attemptResult struct {
	Attempt
	detail        string
	retryAfter    time.Duration
	hasRetryAfter bool
}

// maxAnswer bounds how much of an answer is read.
const maxAnswer = 1 << 20

// attempt sends one request (and the apps-script hop, if any) and classifies the answer.
// The request is detached from ctx's cancellation: once sent it finishes or times out.
func (c *Client) attempt(ctx context.Context, src *Source, method, rawURL string, body []byte, hdr http.Header) attemptResult {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), src.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(actx, method, rawURL, bytes.NewReader(body))
	if err != nil {
		return attemptResult{Attempt: Attempt{Outcome: Refused, Err: err.Error()}, detail: fmt.Sprintf("can't build the request: %v", err)}
	}
	if len(body) == 0 {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	// Defensive: without GetBody the transport can't silently re-send a request that carries
	// an Idempotency-Key header (net/http treats such requests as replayable on some
	// connection errors), so every request that leaves is an attempt we count and rate-limit.
	req.GetBody = nil
	req.Header = hdr.Clone()
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.failure(src, actx, err)
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	code := resp.StatusCode
	if code >= 300 && code < 400 {
		return c.redirect(actx, src, req.URL, resp)
	}
	return c.answer(src, resp, answer, "")
}

// failure classifies an attempt that got no HTTP answer.
func (c *Client) failure(src *Source, actx context.Context, err error) attemptResult {
	var ue *url.Error
	msg := err.Error()
	if errors.As(err, &ue) {
		msg = ue.Err.Error()
	}
	var ne net.Error
	timeout := errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) || actx.Err() != nil
	if timeout {
		o := src.classifyFailure(true)
		d := fmt.Sprintf("no answer from %s within %s (timeout; it may have acted)", src.Name, src.timeout())
		return attemptResult{Attempt: Attempt{Outcome: o, Err: "timeout after " + src.timeout().String()}, detail: d}
	}
	// A transport error can quote what the destination sent (a malformed status line).
	msg = destText(msg, maxQuotedAnswer)
	o := src.classifyFailure(false)
	d := fmt.Sprintf("network error talking to %s: %s (it may have acted)", src.Name, msg)
	return attemptResult{Attempt: Attempt{Outcome: o, Err: msg}, detail: d}
}

// redirect handles a 3xx: the apps-script hop when allowed, else the table's outcome
// (systemic by default) with a Detail naming where it pointed.
func (c *Client) redirect(actx context.Context, src *Source, from *url.URL, resp *http.Response) attemptResult {
	code := resp.StatusCode
	loc := resp.Header.Get("Location")
	// Shown as it came when absolute: its resolved form could hide the dot segments that
	// made it refused.
	target := loc
	if u, err := from.Parse(loc); err == nil && loc != "" && !strings.Contains(loc, "://") {
		target = u.String() + " (a relative Location)"
	}
	_, overridden := src.Overrides[strconv.Itoa(code)]
	if src.preset() == PresetAppsScript && (code == http.StatusFound || code == http.StatusSeeOther) && !overridden && loc != "" {
		// The Location is checked as it came, and followed exactly as checked: resolving
		// it first (from.Parse) would remove dot segments and hide what the destination
		// asked for. Apps Script always answers with an absolute URL; a relative one is
		// not followed.
		if model.URLUnderPrefixes(loc, src.redirectPrefixes()) == nil {
			return c.hop(actx, src, loc)
		}
	}
	o := src.classifyStatus(code)
	where := destText(target, maxQuotedAnswer)
	if where == "" {
		where = "nowhere (no Location header)"
	}
	d := fmt.Sprintf("%d from %s to %s: the endpoint moved; update url", code, src.Name, where)
	if src.preset() == PresetAppsScript {
		d = fmt.Sprintf("%d from %s to %s: not an allowed redirect_prefixes address; update url or redirect_prefixes", code, src.Name, where)
	}
	if o != Systemic {
		d = fmt.Sprintf("%d from %s to %s", code, src.Name, where)
	}
	return attemptResult{Attempt: Attempt{Outcome: o, Status: code, Err: fmt.Sprintf("%d redirect to %s", code, where)}, detail: d, retryAfter: 0}
}

// hop follows the Apps Script redirect once: a GET with no body, no key and none of the
// source's headers (they never cross to another host). Its answer is the outcome.
func (c *Client) hop(actx context.Context, src *Source, target string) attemptResult {
	req, err := http.NewRequestWithContext(actx, http.MethodGet, target, nil)
	if err != nil {
		where := destText(target, maxQuotedAnswer)
		return attemptResult{Attempt: Attempt{Outcome: Systemic, Err: destText(err.Error(), maxQuotedAnswer)}, detail: fmt.Sprintf("redirect from %s to %s can't be followed: %s", src.Name, where, destText(err.Error(), maxQuotedAnswer))}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		r := c.failure(src, actx, err)
		r.detail = "after the redirect: " + r.detail
		return r
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		where := destText(resp.Header.Get("Location"), maxQuotedAnswer)
		return attemptResult{Attempt: Attempt{Outcome: Systemic, Status: resp.StatusCode, Err: "redirected twice"},
			detail: fmt.Sprintf("%s's redirect target redirected again (%d to %s); only one hop is followed: check the script's deployment", src.Name, resp.StatusCode, where)}
	}
	return c.answer(src, resp, answer, " (after the redirect)")
}

// answer classifies a non-redirect HTTP answer.
func (c *Client) answer(src *Source, resp *http.Response, body []byte, suffix string) attemptResult {
	code := resp.StatusCode
	r := attemptResult{Attempt: Attempt{Status: code}}
	if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), c.now()); ok {
		r.retryAfter, r.hasRetryAfter = d, true
	}
	_, overridden := src.Overrides[strconv.Itoa(code)]
	replayed := strings.EqualFold(strings.TrimSpace(resp.Header.Get("Idempotent-Replayed")), "true")
	if code >= 200 && code < 300 && src.preset() == PresetAppsScript && !overridden {
		o, why := appsScriptAnswer(body)
		if o == Delivered && replayed {
			o = Duplicate
		}
		r.Outcome = o
		switch o {
		case Delivered:
			r.detail = fmt.Sprintf("%d from %s%s", code, src.Name, suffix)
		case Duplicate:
			r.detail = fmt.Sprintf("%s had already acted on this key (duplicate)%s", src.Name, suffix)
		case Rejected:
			r.Err = why
			r.detail = fmt.Sprintf("%s rejected the call%s: %s", src.Name, suffix, why)
		default:
			r.Err = why
			r.detail = fmt.Sprintf("%d from %s%s but %s (it may have acted)", code, src.Name, suffix, why)
		}
		return r
	}
	o := src.classifyStatus(code)
	if o == Delivered && replayed {
		o = Duplicate
	}
	r.Outcome = o
	text := http.StatusText(code)
	if text == "" {
		text = "status " + strconv.Itoa(code)
	}
	switch o {
	case Delivered:
		r.detail = fmt.Sprintf("%d from %s%s", code, src.Name, suffix)
		return r
	case Duplicate:
		r.detail = fmt.Sprintf("%d from %s%s: it had already acted on this key (duplicate)", code, src.Name, suffix)
		return r
	}
	r.Err = fmt.Sprintf("%d %s", code, text)
	r.detail = failureDetail(src, o, code, text, suffix, snippet(resp.Header.Get("Content-Type"), body))
	return r
}

// failureDetail says what an answer that is not a delivery means, and for a systemic one
// what to check: the credentials (401/403), the URL (404/405/410), the request's shape
// (400/422).
func failureDetail(src *Source, o Outcome, code int, text, suffix, snip string) string {
	switch {
	case o == Systemic && (code == 401 || code == 403):
		return fmt.Sprintf("%d from %s%s: %s", code, src.Name, suffix, secretHint(src))
	case o == Systemic && (code == 404 || code == 405 || code == 410):
		return fmt.Sprintf("%d from %s%s: the endpoint isn't there; check the row's url and the source's url_prefixes", code, src.Name, suffix)
	case o == Systemic && (code == 400 || code == 422):
		return fmt.Sprintf("%d from %s%s: it refuses the request's shape%s; check the payload format and the source's key placement", code, src.Name, suffix, snip)
	case o == Systemic:
		return fmt.Sprintf("%d %s from %s%s (systemic)%s", code, text, src.Name, suffix, snip)
	case o == Rejected && snip == "":
		return fmt.Sprintf("%d %s from %s%s: rejected", code, text, src.Name, suffix)
	case o == Rejected:
		return fmt.Sprintf("%d from %s%s: rejected%s", code, src.Name, suffix, snip)
	case code == 404:
		return fmt.Sprintf("%d %s from %s%s (it may have acted)", code, text, src.Name, suffix)
	default:
		return fmt.Sprintf("%d %s from %s%s", code, text, src.Name, suffix)
	}
}

// secretHint names the secrets a source sends, for a 401/403 Detail.
func secretHint(src *Source) string {
	env := src.envNames()
	switch len(env) {
	case 0:
		if len(src.Headers) > 0 {
			return fmt.Sprintf("check the credentials in [sources.%s.headers]", src.Name)
		}
		return fmt.Sprintf("it wants credentials; add them to [sources.%s.headers] (e.g. Authorization = \"env:TOKEN\")", src.Name)
	case 1:
		return fmt.Sprintf("check the %s secret", env[0])
	}
	return fmt.Sprintf("check the %s secrets", strings.Join(env, ", "))
}

// appsScriptAnswer reads an Apps Script ContentService answer: {"ok":true} delivered
// ({"ok":true,"duplicate":true} duplicate), {"ok":false,...} rejected, anything else (an HTML
// error page, JSON without a boolean ok) retryable: no usable answer.
func appsScriptAnswer(body []byte) (Outcome, string) {
	var v struct {
		OK        *bool           `json:"ok"`
		Duplicate bool            `json:"duplicate"`
		Error     json.RawMessage `json:"error"`
		Message   string          `json:"message"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(body), &v); err != nil {
		return Retryable, "the answer is not JSON"
	}
	if v.OK == nil {
		return Retryable, `the answer has no "ok" field`
	}
	if *v.OK {
		if v.Duplicate {
			return Duplicate, ""
		}
		return Delivered, ""
	}
	why := v.Message
	if len(v.Error) > 0 {
		why = keyValue(v.Error)
		if why == "" {
			why = string(v.Error)
		}
	}
	if why == "" {
		why = `it answered {"ok":false}`
	}
	return Rejected, destText(why, 200)
}

// snippet returns ": <start of the body>" for text and JSON answers, "" for others (an HTML
// error page says nothing useful in a cell).
func snippet(contentType string, body []byte) string {
	ct := strings.ToLower(contentType)
	if len(bytes.TrimSpace(body)) == 0 || !(strings.Contains(ct, "json") || strings.HasPrefix(ct, "text/plain")) {
		return ""
	}
	return " (" + destText(string(body), 200) + ")"
}

// parseRetryAfter reads a Retry-After value relative to now: delta-seconds or an HTTP-date in
// any of the three forms http.ParseTime reads. A past date, a negative number or garbage is
// not usable (ok false): the caller falls back to its backoff.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > int64(1<<62/time.Second) {
			return time.Duration(1<<62 - 1), true // absurdly far: beyond any cap
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0, false
	}
	return d, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
