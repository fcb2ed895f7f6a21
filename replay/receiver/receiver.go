// Package receiver is a reference receiver of replayed calls, with fault injection: the
// destination triage's replay tests and demo talk to (DESIGN §5). It dedupes by idempotency key
// under a lock, records every effect and every attempt, and can be told per request to act and
// then lose the answer in each of the ways real endpoints do.
//
//	rcv := receiver.New()
//	rcv.Rule = func(key string, n int) (receiver.Fault, bool) {
//		if n == 1 {
//			return receiver.Fault{Mode: receiver.DropAfterAct}, true
//		}
//		return receiver.Fault{}, false
//	}
//	srv := httptest.NewServer(rcv)
//
// The design it follows, and the section (§N) and invariant numbers its comments cite, are in
// docs/DESIGN.md.
package receiver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Mode is how the receiver answers a request.
type Mode int

// Modes. The "AfterAct" modes perform the effect first (the call did happen) and then fail to
// say so; the others don't act.
const (
	// OK acts and answers 200 {"ok":true} (a duplicate: {"ok":true,"duplicate":true} and
	// Idempotent-Replayed: true).
	OK Mode = iota
	// DropAfterAct acts, then closes the connection without an answer.
	DropAfterAct
	// NotFoundAfterAct acts, then answers 404 with an HTML page (Apps Script's flaky error).
	NotFoundAfterAct
	// RedirectAfterAct acts, then answers 302 to an echo URL served by the receiver, which
	// answers the JSON to a GET only (a POST there gets 405), as Apps Script does.
	RedirectAfterAct
	// TooManyRequests answers 429 with Retry-After (Fault.RetryAfter, default "1").
	TooManyRequests
	// Unavailable answers 503 (with Fault.RetryAfter if set).
	Unavailable
	// Unauthorized answers 401.
	Unauthorized
	// Reject answers 200 {"ok":false,"error":"rejected by receiver"}: a permanent "no" in the
	// Apps Script style.
	Reject
	// Status answers Fault.Status with a small JSON error body.
	Status
	// Moved answers Fault.Status (default 301) with Location: Fault.Location.
	Moved
)

var modeNames = map[Mode]string{OK: "ok", DropAfterAct: "drop-after-act", NotFoundAfterAct: "404-after-act",
	RedirectAfterAct: "302-after-act", TooManyRequests: "429", Unavailable: "503", Unauthorized: "401",
	Reject: "reject", Status: "status", Moved: "moved"}

// String names the mode.
func (m Mode) String() string {
	if s, ok := modeNames[m]; ok {
		return s
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// Fault is what to do with one request.
type Fault struct {
	// Mode is the answer.
	Mode Mode
	// Latency delays the request before it acts or answers (a slow script).
	Latency time.Duration
	// RetryAfter is the Retry-After header of 429 (default "1") and 503 (default none).
	RetryAfter string
	// Status is the code of Status and Moved.
	Status int
	// Location is where Moved points.
	Location string
}

// RecordedAttempt is one request the receiver got.
type RecordedAttempt struct {
	// Key is the request's idempotency key ("" if none; an echo GET carries the key of the
	// call it answers for).
	Key    string
	Method string
	Path   string
	Body   []byte
	// Headers are the request headers as received.
	Headers http.Header
	// Mode is how it was answered.
	Mode Mode
	// Echo is set for requests to the echo URL.
	Echo bool
	// At is when it arrived.
	At time.Time
}

// Receiver is an http.Handler standing for a destination of replayed calls. Set its fields
// before serving; it is safe for concurrent requests.
type Receiver struct {
	// KeyHeader is the key header (default Idempotency-Key).
	KeyHeader string
	// BodyKeyField, when set, reads the key from this top-level JSON body field (the header
	// is used when the body has none).
	BodyKeyField string
	// Default is the fault of requests the Rule doesn't claim (zero: OK).
	Default Fault
	// Rule picks a request's fault from its key and its attempt number for that key
	// (1-based); ok false falls back to Default.
	Rule func(key string, attempt int) (f Fault, ok bool)
	// Latency is added to every request.
	Latency time.Duration
	// OnEffect is called once per key, when it first acts, under the dedupe lock.
	OnEffect func(key string, body []byte)
	// NoDedupe makes every acting request an effect (to show what a retry does without an
	// idempotency key check).
	NoDedupe bool
	// EchoBase is the scheme://host the echo URL is built on (default http:// + the request's
	// Host).
	EchoBase string

	mu       sync.Mutex
	effects  map[string]int
	bodies   map[string][]byte
	attempts []RecordedAttempt
	perKey   map[string]int
	echoes   map[string]echo
	inflight int
	peak     int

	effectMu sync.Mutex // the dedupe lock: check-then-act is atomic
}

type echo struct {
	key  string
	body []byte
}

// New returns a receiver that acts on every keyed request and answers 200.
func New() *Receiver {
	return &Receiver{}
}

func (rc *Receiver) initLocked() {
	if rc.effects == nil {
		rc.effects = map[string]int{}
		rc.bodies = map[string][]byte{}
		rc.perKey = map[string]int{}
		rc.echoes = map[string]echo{}
	}
}

// Effects returns how many times each key acted (1 per key when deduping works).
func (rc *Receiver) Effects() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(rc.effects))
	for k, v := range rc.effects {
		out[k] = v
	}
	return out
}

// EffectBody returns the body of a key's first effect.
func (rc *Receiver) EffectBody(key string) []byte {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]byte(nil), rc.bodies[key]...)
}

// Attempts returns every request received, in arrival order.
func (rc *Receiver) Attempts() []RecordedAttempt {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]RecordedAttempt(nil), rc.attempts...)
}

// MaxConcurrent returns the peak number of requests in progress at once.
func (rc *Receiver) MaxConcurrent() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.peak
}

// InFlight returns the number of requests in progress now.
func (rc *Receiver) InFlight() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.inflight
}

func (rc *Receiver) keyHeader() string {
	if rc.KeyHeader != "" {
		return rc.KeyHeader
	}
	return "Idempotency-Key"
}

// ServeHTTP answers a replayed call, or a GET of an echo URL.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.initLocked()
	rc.inflight++
	if rc.inflight > rc.peak {
		rc.peak = rc.inflight
	}
	rc.mu.Unlock()
	defer func() {
		rc.mu.Lock()
		rc.inflight--
		rc.mu.Unlock()
	}()
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if tok, ok := strings.CutPrefix(r.URL.Path, "/echo/"); ok {
		rc.serveEcho(w, r, tok, body)
		return
	}
	key := r.Header.Get(rc.keyHeader())
	if rc.BodyKeyField != "" {
		if k := bodyKey(body, rc.BodyKeyField); k != "" {
			key = k
		}
	}
	f := rc.record(r, key, body)

	if d := rc.Latency + f.Latency; d > 0 {
		time.Sleep(d)
	}
	if key == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error": "missing idempotency key"}, nil)
		return
	}
	switch f.Mode {
	case OK:
		dup := rc.act(key, body)
		h := http.Header{}
		res := map[string]any{"ok": true}
		if dup {
			h.Set("Idempotent-Replayed", "true")
			res["duplicate"] = true
		}
		writeJSON(w, http.StatusOK, res, h)
	case DropAfterAct:
		rc.act(key, body)
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	case NotFoundAfterAct:
		rc.act(key, body)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "<!DOCTYPE html><html><head><title>Error</title></head><body><p>Sorry, unable to open the file at this time.</p></body></html>")
	case RedirectAfterAct:
		rc.redirectAfterAct(w, r, key, body)
	case TooManyRequests:
		h := http.Header{}
		ra := f.RetryAfter
		if ra == "" {
			ra = "1"
		}
		h.Set("Retry-After", ra)
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"ok": false, "error": "rate limited"}, h)
	case Unavailable:
		h := http.Header{}
		if f.RetryAfter != "" {
			h.Set("Retry-After", f.RetryAfter)
		}
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "error": "unavailable"}, h)
	case Unauthorized:
		writeJSON(w, http.StatusUnauthorized, map[string]any{"ok": false, "error": "bad credentials"}, nil)
	case Reject:
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "rejected by receiver"}, nil)
	case Status:
		code := f.Status
		if code == 0 {
			code = http.StatusInternalServerError
		}
		writeJSON(w, code, map[string]any{"ok": false, "error": http.StatusText(code)}, nil)
	case Moved:
		code := f.Status
		if code == 0 {
			code = http.StatusMovedPermanently
		}
		w.Header().Set("Location", f.Location)
		w.WriteHeader(code)
	default:
		http.Error(w, "unknown fault mode", http.StatusInternalServerError)
	}
}

// record counts the key's attempt, picks its fault (Rule, else Default) and records the
// attempt.
func (rc *Receiver) record(r *http.Request, key string, body []byte) Fault {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	if key != "" {
		rc.perKey[key]++
		n = rc.perKey[key]
	}
	f := rc.Default
	if rc.Rule != nil {
		if g, ok := rc.Rule(key, n); ok {
			f = g
		}
	}
	rc.attempts = append(rc.attempts, RecordedAttempt{Key: key, Method: r.Method, Path: r.URL.Path, Body: body,
		Headers: r.Header.Clone(), Mode: f.Mode, At: time.Now()})
	return f
}

// redirectAfterAct acts, then answers as Apps Script does: a 302 to an echo URL that holds
// the JSON answer.
func (rc *Receiver) redirectAfterAct(w http.ResponseWriter, r *http.Request, key string, body []byte) {
	dup := rc.act(key, body)
	res := []byte(`{"ok":true}`)
	if dup {
		res = []byte(`{"ok":true,"duplicate":true}`)
	}
	tok := token()
	rc.mu.Lock()
	rc.echoes[tok] = echo{key: key, body: res}
	rc.mu.Unlock()
	base := rc.EchoBase
	if base == "" {
		base = "http://" + r.Host
	}
	w.Header().Set("Location", strings.TrimRight(base, "/")+"/echo/"+tok)
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.WriteHeader(http.StatusFound)
	io.WriteString(w, "<HTML><HEAD><TITLE>Moved Temporarily</TITLE></HEAD><BODY>Moved Temporarily</BODY></HTML>")
}

// serveEcho answers the echo URL: the JSON to a GET, 405 to anything else (as Apps Script's
// googleusercontent echo does).
func (rc *Receiver) serveEcho(w http.ResponseWriter, r *http.Request, tok string, body []byte) {
	rc.mu.Lock()
	e, ok := rc.echoes[tok]
	rc.attempts = append(rc.attempts, RecordedAttempt{Key: e.key, Method: r.Method, Path: r.URL.Path, Body: body,
		Headers: r.Header.Clone(), Echo: true, At: time.Now()})
	rc.mu.Unlock()
	if r.Method != http.MethodGet {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusMethodNotAllowed)
		io.WriteString(w, "<html><body>Sorry, the file you have requested does not exist or the method is not allowed.</body></html>")
		return
	}
	if !ok {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "<html><body>Sorry, unable to open the file at this time.</body></html>")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(e.body)
}

// act performs the effect for a key once (under the dedupe lock) and reports whether it was a
// duplicate.
func (rc *Receiver) act(key string, body []byte) (dup bool) {
	rc.effectMu.Lock()
	defer rc.effectMu.Unlock()
	rc.mu.Lock()
	seen := rc.effects[key] > 0
	if seen && !rc.NoDedupe {
		rc.mu.Unlock()
		return true
	}
	rc.effects[key]++
	if !seen {
		rc.bodies[key] = append([]byte(nil), body...)
	}
	rc.mu.Unlock()
	if rc.OnEffect != nil && !seen {
		rc.OnEffect(key, body)
	}
	return seen
}

func bodyKey(body []byte, field string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return ""
	}
	raw, ok := obj[field]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

func writeJSON(w http.ResponseWriter, code int, v any, h http.Header) {
	for k, vs := range h {
		for _, x := range vs {
			w.Header().Add(k, x)
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func token() string {
	var b [12]byte
	rand.Read(b[:])
	return "user_content_key_" + hex.EncodeToString(b[:])
}

// ErrDropped is the error an in-memory transport returns when the handler drops the
// connection.
var ErrDropped = errors.New("connection closed by the server without an answer")

// Transport returns an in-memory http.RoundTripper that serves every request with h, in the
// caller's goroutine tree and without sockets, so testing/synctest's fake clock drives it. It
// honours the request's context (a deadline gives up waiting, like a client timeout; the
// handler runs on). A handler that panics with http.ErrAbortHandler (or hijacks, which the
// in-memory writer doesn't support) yields ErrDropped.
func Transport(h http.Handler) http.RoundTripper {
	return roundTripper{h: h}
}

type roundTripper struct{ h http.Handler }

// RoundTrip serves req with the handler (see Transport).
func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("in-memory transport: reading the request body: %w", err)
		}
		body = b
	}
	sreq := httptest.NewRequestWithContext(context.WithoutCancel(req.Context()), req.Method, req.URL.String(), bytes.NewReader(body))
	sreq.Header = req.Header.Clone()
	sreq.Host = req.URL.Host
	rec := httptest.NewRecorder()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					done <- ErrDropped
					return
				}
				done <- fmt.Errorf("in-memory transport: handler panic: %v", p)
				return
			}
			done <- nil
		}()
		t.h.ServeHTTP(rec, sreq)
	}()
	select {
	case err := <-done:
		if err != nil {
			return nil, err
		}
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}
