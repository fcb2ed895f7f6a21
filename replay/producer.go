package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/store"
)

// DeadLetterSink records calls that were not delivered, so a later `triage replay` can send
// them again with the same key (store.DeadLetterSink). *sheets.Store is one: it appends the
// letters to the dead-letter tab (failed_calls) in one request; *postgres.Store inserts them
// in one statement.
//
// A sink records every letter it is given or returns an error; on an error the producer
// treats none of them as recorded (a caller that hands them to the sink again may leave a
// row twice, under one key: a replay refuses the second, naming the first, so nothing is
// sent twice).
type DeadLetterSink = store.DeadLetterSink

// DefaultDeadLetterOn is the outcomes a Producer dead-letters when its DeadLetterOn is nil:
// every end that is not a delivery. Retryable covers a call whose attempts ran out and a
// deferred one (Retry-After beyond the cap); Refused covers a call never sent (its URL not
// allowed, no key...), so it is not lost either: a replay refuses it for the same reason until
// the config or the row is fixed.
var DefaultDeadLetterOn = []Outcome{Retryable, Systemic, Rejected, Refused}

// DefaultProducerConcurrency bounds the calls of a SendAll in progress at once when
// Producer.Concurrency is 0, as a bulk replay's default does.
const DefaultProducerConcurrency = DefaultConcurrency

// Producer sends calls for the code that makes them in the first place (the Apps Script
// drop-in's safeFetch): through Client (the same keys, outcome table, backoff, Retry-After, rate
// limits and timeouts as `triage replay`), handing every call that is not delivered to Sink
// with exactly the key it was sent with. Set the fields, then use it from any number of
// goroutines.
type Producer struct {
	// Client sends the calls; its Sources are the configured sources. Required.
	Client *Client
	// Sink records the calls that end in DeadLetterOn. Without one a call that is not
	// delivered comes back with Sent.Err set: the caller must keep it.
	Sink DeadLetterSink
	// DeadLetterOn lists the outcomes that are dead-lettered (nil: DefaultDeadLetterOn). A call
	// cut short before its attempts ran out (a cancel, a halt) is dead-lettered whatever
	// this says: nothing has been decided about it.
	DeadLetterOn []Outcome
	// KeyFields maps a source to the top-level payload field a call's key is read from when
	// Call.Key is empty ("id" for an Apps Script web app's `{"id": ...}`). A source that carries its key in
	// a body field (Source.Key {In: "body", Name: "id"}, config `key = "body:id"`) reads that
	// field without being listed, as a replay reads its rows.
	KeyFields map[string]string
	// Concurrency bounds SendAll's calls in progress (0: DefaultProducerConcurrency, at most
	// MaxConcurrency).
	Concurrency int
	// HaltAfterRetryable is how many retryable results in a row halt a SendAll (0: 3, as a
	// bulk replay; negative: never). A systemic result always halts it.
	HaltAfterRetryable int
}

// Sent is what became of one call of a Producer.
type Sent struct {
	// Key is the key the call was sent with (the one recorded with it); "" when it had none
	// and was refused unsent.
	Key string
	// Result is the client's result. Outcome 0 with no attempts: not sent (the batch halted
	// or was cancelled first).
	Result Result
	// DeadLettered is set when the sink recorded the call.
	DeadLettered bool
	// Err is set when the call was neither delivered nor recorded (the sink failed, there is
	// none, or the letter can't be stored): the caller must keep the call, with Key.
	Err error
}

// Delivered reports whether the destination acted on the call (delivered or duplicate).
func (s Sent) Delivered() bool { return s.Result.Outcome.Success() }

// Key returns the key a call is sent with: Call.Key (trimmed, as a key cell is read back), else
// the payload's key field for its source (see Producer.KeyFields), else "". Sending the
// trimmed key keeps the key sent, the key recorded and the key a replay reads one string.
func (p *Producer) Key(call Call) string {
	if k := strings.TrimSpace(call.Key); k != "" {
		return k
	}
	field := p.KeyFields[call.Source]
	if field == "" && p.Client != nil {
		if src := p.Client.Sources[call.Source]; src != nil {
			field = src.bodyKeyField()
		}
	}
	k, _ := model.PayloadKey(string(call.Body), field)
	return k
}

// keyConflict says why a call can't be sent as it is: its Call.Key disagrees with the key
// field of its own payload. Sent, the receiver would see one key and the body another; recorded,
// the row's key cell and payload would disagree and a replay would refuse it for good
// (invariant 3: a call has one key). "" when they agree or the payload has no key field.
func (p *Producer) keyConflict(call Call) string {
	given := strings.TrimSpace(call.Key)
	if given == "" {
		return ""
	}
	field := p.KeyFields[call.Source]
	if field == "" && p.Client != nil {
		if src := p.Client.Sources[call.Source]; src != nil {
			field = src.bodyKeyField()
		}
	}
	if field == "" {
		return ""
	}
	if inBody, _ := model.PayloadKey(string(call.Body), field); inBody != "" && inBody != given {
		return fmt.Sprintf("the call's key %q disagrees with its payload's %s %q: a call has one key; pass the payload's or none (not sent, not recorded)", given, field, inBody)
	}
	return ""
}

// refusedSent is the answer for a call refused before sending because of the caller's own
// mistake: nothing sent, nothing recorded, the caller keeps it.
func refusedSent(key, why string) Sent {
	return Sent{Key: key, Result: Result{Outcome: Refused, Detail: why}, Err: errors.New(why)}
}

// Send sends one call (see Client.Do) and, if it ends in DeadLetterOn, hands it to the sink at
// once (one request per call: use SendAll for many). The sink is called with ctx's values but
// not its cancellation: a call cut short by a cancel is exactly one to record.
func (p *Producer) Send(ctx context.Context, call Call) Sent {
	if why := p.keyConflict(call); why != "" {
		return refusedSent(strings.TrimSpace(call.Key), why)
	}
	call.Key = p.Key(call)
	s := Sent{Key: call.Key, Result: p.Client.do(ctx, call, hooks{})}
	p.record(ctx, []Call{call}, []*Sent{&s})
	return s
}

// SendAll sends calls with at most Concurrency in progress, then hands every call that ends
// in DeadLetterOn to the sink in one batch. The halt rule of a bulk replay applies (see
// HaltAfterRetryable): after a systemic result, or too many retryable ones in a row, nothing
// new is sent, and the calls not sent are dead-lettered too ("not sent: the batch halted"),
// so each call is either delivered or recorded with its key, or its Sent.Err says why not.
// The results are in the order of calls; the halt, if any, is returned with them.
func (p *Producer) SendAll(ctx context.Context, calls []Call) ([]Sent, *model.Halt) {
	c := p.Client
	c.init()
	conc := p.Concurrency
	if conc <= 0 {
		conc = DefaultProducerConcurrency
	}
	conc = min(conc, MaxConcurrency, max(len(calls), 1))
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	brk := &breaker{after: p.HaltAfterRetryable}
	trip := func(src string, r Result) {
		if h := brk.record(src, r); h != nil {
			cancel(ErrHalted)
		}
	}

	out := make([]Sent, len(calls))
	prepared := make([]Call, len(calls))
	conflict := make([]bool, len(calls))
	for i, call := range calls {
		if why := p.keyConflict(call); why != "" {
			out[i], conflict[i] = refusedSent(strings.TrimSpace(call.Key), why), true
		}
		call.Key = p.Key(call)
		prepared[i] = call
		out[i].Key = call.Key
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for i := range next {
				call := prepared[i]
				r := c.do(runCtx, call, hooks{settle: func(r Result) { trip(call.Source, r) }})
				if len(r.Attempts) == 0 && r.Outcome == Systemic {
					// Broken before anything was sent (a secret missing from the environment):
					// settle is not told, so the breaker is told here.
					trip(call.Source, r)
				}
				out[i].Result = r
			}
		})
	}
	for i := range prepared {
		if !conflict[i] {
			next <- i
		}
	}
	close(next)
	wg.Wait()

	halt := brk.halt()
	var toRecord []Call
	var all []*Sent
	for i := range out {
		if conflict[i] {
			continue // the caller's mistake: kept by the caller (Err), never recorded
		}
		if r := &out[i].Result; halt != nil && len(r.Attempts) == 0 && r.Outcome == 0 {
			r.Detail = capText(fmt.Sprintf("not sent: the batch halted first (%s: %s)", halt.Cause, halt.Detail), MaxDetail)
		}
		toRecord = append(toRecord, prepared[i])
		all = append(all, &out[i])
	}
	p.record(ctx, toRecord, all)
	return out, halt
}

// deadLetters reports whether a result is to be recorded.
func (p *Producer) deadLetters(r Result) bool {
	switch {
	case r.Outcome.Success():
		return false
	case r.Outcome == 0 || r.Interrupted:
		return true
	}
	on := p.DeadLetterOn
	if on == nil {
		on = DefaultDeadLetterOn
	}
	return slices.Contains(on, r.Outcome)
}

// letter is a call's dead letter: the body as it was (or would have been) sent, the key it was
// sent with, the client's account of what happened.
func (p *Producer) letter(call Call, r Result) model.DeadLetter {
	body := call.Body
	if src := p.Client.Sources[call.Source]; src != nil && call.Key != "" {
		// The bytes that left (a body key field inserted where the source wants one), so the
		// row's payload and key agree and a replay sends these bytes again (invariant 4).
		if b, err := prepareBody(src, call.Body, call.Key); err == nil {
			body = b
		}
	}
	method := strings.ToUpper(strings.TrimSpace(call.Method))
	if method == "" {
		method = "POST"
	}
	return model.DeadLetter{Timestamp: p.Client.now(), Source: call.Source, URL: call.URL, Method: method,
		Payload: string(body), Error: r.Detail, Attempts: len(r.Attempts), Key: call.Key}
}

// record hands the sent calls that are to be dead-lettered to the sink, in one batch, and
// marks each Sent with what became of it.
func (p *Producer) record(ctx context.Context, calls []Call, sent []*Sent) {
	var letters []model.DeadLetter
	var who []*Sent
	for i, s := range sent {
		if !p.deadLetters(s.Result) {
			continue
		}
		l := p.letter(calls[i], s.Result)
		if err := model.CheckDeadLetter(l); err != nil {
			s.Err = fmt.Errorf("%s: %w", notDelivered(s.Result), err)
			continue
		}
		letters = append(letters, l)
		who = append(who, s)
	}
	if len(letters) == 0 {
		return
	}
	var err error
	if p.Sink == nil {
		err = errors.New("the producer has no dead-letter sink (Producer.Sink)")
	} else {
		err = p.Sink.DeadLetter(context.WithoutCancel(ctx), letters)
	}
	for _, s := range who {
		if err != nil {
			s.Err = fmt.Errorf("%s, and it was not dead-lettered: %w; keep the call (key %q) and record it later", notDelivered(s.Result), err, s.Key)
			continue
		}
		s.DeadLettered = true
	}
}

// notDelivered says in a few words why a call is being dead-lettered.
func notDelivered(r Result) string {
	if r.Outcome == 0 {
		return "not sent"
	}
	return "not delivered (" + r.Outcome.String() + ")"
}
