package replay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// batchSink records the batches a producer hands it. It stands for a sink only as the
// DeadLetterSink interface sees one (sheets.Store's own tests cover the real one; the
// end-to-end test in internal/cli uses it).
type batchSink struct {
	mu      sync.Mutex
	batches [][]model.DeadLetter
	err     error
}

func (s *batchSink) DeadLetter(_ context.Context, l []model.DeadLetter) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, append([]model.DeadLetter(nil), l...))
	return s.err
}

func (s *batchSink) letters() []model.DeadLetter {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []model.DeadLetter
	for _, b := range s.batches {
		out = append(out, b...)
	}
	return out
}

// producerFixture is a receiver behind a real socket and a producer whose source "crm"
// allows it.
func producerFixture(t *testing.T, rcv *receiver.Receiver, src *replay.Source) (*replay.Producer, *batchSink, string) {
	t.Helper()
	srv := serve(t, rcv)
	src.Name = "crm"
	src.URLPrefixes = []string{srv.URL + "/v1/"}
	sink := &batchSink{}
	return &replay.Producer{Client: fastClient(src), Sink: sink}, sink, srv.URL + "/v1/contacts"
}

// A call without a key is sent with its payload field's value (Producer.KeyFields), and a
// call that runs out of attempts is dead-lettered with exactly that key, its attempts and the
// client's detail.
func TestProducerKeyFromPayloadField(t *testing.T) {
	rcv := &receiver.Receiver{Default: receiver.Fault{Mode: receiver.Unavailable}}
	p, sink, url := producerFixture(t, rcv, &replay.Source{})
	p.KeyFields = map[string]string{"crm": "order_id"}
	s := p.Send(context.Background(), replay.Call{Source: "crm", URL: url, Body: []byte(`{"order_id":" ord-7 ","n":7}`)})
	if s.Key != "ord-7" {
		t.Fatalf("key %q, want ord-7 (the payload field, trimmed)", s.Key)
	}
	got := attemptsByKey(rcv)["ord-7"]
	if len(got) != replay.DefaultMaxAttempts || len(rcv.Attempts()) != len(got) {
		t.Fatalf("receiver saw %d attempts with key ord-7 of %d, want %d", len(got), len(rcv.Attempts()), replay.DefaultMaxAttempts)
	}
	if !s.DeadLettered || s.Err != nil {
		t.Fatalf("dead-lettered %v, err %v", s.DeadLettered, s.Err)
	}
	ls := sink.letters()
	if len(ls) != 1 {
		t.Fatalf("%d letters, want 1", len(ls))
	}
	l := ls[0]
	if l.Key != "ord-7" || l.Attempts != 3 || l.Source != "crm" || l.URL != url || l.Method != "POST" || l.Timestamp.IsZero() {
		t.Errorf("letter %+v", l)
	}
	if l.Error != s.Result.Detail || !strings.Contains(l.Error, "503") {
		t.Errorf("error %q, want the result's detail %q", l.Error, s.Result.Detail)
	}
	if l.Payload != `{"order_id":" ord-7 ","n":7}` {
		t.Errorf("payload %q changed", l.Payload)
	}
}

// A source that carries its key in a body field: the payload recorded is the body exactly as
// it was sent (the key field inserted), so a replay sends those bytes under that key.
func TestProducerBodyKeyPayloadAsSent(t *testing.T) {
	rcv := &receiver.Receiver{BodyKeyField: "id", Default: receiver.Fault{Mode: receiver.Unavailable}}
	p, sink, url := producerFixture(t, rcv, &replay.Source{Key: []replay.KeySpec{{In: replay.KeyInBody, Name: "id"}}, MaxAttempts: 2})
	s := p.Send(context.Background(), replay.Call{Key: "k-1", Source: "crm", URL: url, Body: []byte(`{"n": 1}`)})
	if !s.DeadLettered {
		t.Fatalf("not dead-lettered: %+v", s)
	}
	l := sink.letters()[0]
	sent := attemptsByKey(rcv)["k-1"]
	if len(sent) != 2 || string(sent[0].Body) != l.Payload || string(sent[1].Body) != l.Payload {
		t.Fatalf("payload %q, receiver got %d attempts", l.Payload, len(sent))
	}
	if k, _ := model.PayloadKey(l.Payload, "id"); k != "k-1" || l.Key != "k-1" {
		t.Errorf("payload key %q, key %q: want both k-1", k, l.Key)
	}
	// Without a Key, the body field is where the key is read from, as `key = "body:id"` does.
	s = p.Send(context.Background(), replay.Call{Source: "crm", URL: url, Body: []byte(`{"id":"k-2"}`)})
	if s.Key != "k-2" || len(attemptsByKey(rcv)["k-2"]) != 2 {
		t.Errorf("key %q, attempts %d", s.Key, len(attemptsByKey(rcv)["k-2"]))
	}
}

// Which outcomes are dead-lettered is configurable; delivered and duplicate never are; a
// refused call (never sent) is by default, with no attempts.
func TestProducerDeadLetterOn(t *testing.T) {
	rcv := &receiver.Receiver{Rule: func(key string, n int) (receiver.Fault, bool) {
		if strings.HasPrefix(key, "gone") {
			return receiver.Fault{Mode: receiver.Status, Status: 410}, true
		}
		return receiver.Fault{}, false
	}}
	p, sink, url := producerFixture(t, rcv, &replay.Source{})
	ctx := context.Background()
	if s := p.Send(ctx, replay.Call{Key: "ok-1", Source: "crm", URL: url, Body: []byte(`{}`)}); !s.Delivered() || s.DeadLettered {
		t.Errorf("delivered call: %+v", s)
	}
	if s := p.Send(ctx, replay.Call{Key: "ok-1", Source: "crm", URL: url, Body: []byte(`{}`)}); s.Result.Outcome != replay.Duplicate || s.DeadLettered {
		t.Errorf("duplicate call: %+v", s)
	}
	if s := p.Send(ctx, replay.Call{Key: "gone-1", Source: "crm", URL: url, Body: []byte(`{}`)}); s.Result.Outcome != replay.Rejected || !s.DeadLettered {
		t.Errorf("rejected call with the default set: %+v", s)
	}
	s := p.Send(ctx, replay.Call{Key: "elsewhere", Source: "crm", URL: "https://evil.example/v1/x", Body: []byte(`{}`)})
	if s.Result.Outcome != replay.Refused || !s.DeadLettered {
		t.Errorf("refused call: %+v", s)
	}
	if ls := sink.letters(); len(ls) != 2 || ls[1].Attempts != 0 || ls[1].Key != "elsewhere" {
		t.Errorf("letters %+v", ls)
	}
	p.DeadLetterOn = []replay.Outcome{replay.Retryable}
	if s := p.Send(ctx, replay.Call{Key: "gone-2", Source: "crm", URL: url, Body: []byte(`{}`)}); s.DeadLettered || s.Err != nil {
		t.Errorf("rejected call not in DeadLetterOn: %+v", s)
	}
	if n := len(sink.letters()); n != 2 {
		t.Errorf("%d letters, want 2", n)
	}
}

// SendAll hands every dead letter to the sink in one batch. A systemic answer halts it: the
// calls not sent are dead-lettered too, with their keys, no attempts and the halt's reason,
// so every call is delivered or recorded.
func TestSendAllHaltBatchesEverything(t *testing.T) {
	rcv := &receiver.Receiver{Rule: func(key string, n int) (receiver.Fault, bool) {
		return receiver.Fault{Mode: receiver.Unauthorized}, key == "k-2"
	}}
	p, sink, url := producerFixture(t, rcv, &replay.Source{})
	p.Concurrency = 1
	calls := make([]replay.Call, 10)
	for i := range calls {
		calls[i] = replay.Call{Source: "crm", URL: url, Body: []byte(fmt.Sprintf(`{"id":"k-%d"}`, i))}
	}
	p.KeyFields = map[string]string{"crm": "id"}
	sent, halt := p.SendAll(context.Background(), calls)
	if halt == nil || halt.Cause != "systemic" {
		t.Fatalf("halt %+v, want systemic", halt)
	}
	if len(sink.batches) != 1 || len(sink.batches[0]) != 8 {
		t.Fatalf("sink got %d batches (%v), want one of 8 letters (k-2 and the 7 not sent)", len(sink.batches), sink.batches)
	}
	if n := len(rcv.Attempts()); n != 3 {
		t.Errorf("receiver got %d requests, want 3 (nothing after the halt)", n)
	}
	for i, s := range sent {
		want := fmt.Sprintf("k-%d", i)
		if s.Key != want {
			t.Errorf("call %d sent as %q", i, s.Key)
		}
		if i < 2 {
			if !s.Delivered() || s.DeadLettered {
				t.Errorf("call %d: %+v", i, s)
			}
			continue
		}
		if !s.DeadLettered || s.Err != nil {
			t.Errorf("call %d not recorded: %+v", i, s)
		}
	}
	for _, l := range sink.batches[0][1:] {
		if l.Attempts != 0 || !strings.Contains(l.Error, "not sent: the batch halted first (systemic: 401") {
			t.Errorf("letter %s: attempts %d, error %q", l.Key, l.Attempts, l.Error)
		}
	}
	// Three retryable results in a row halt a batch too, unless the producer says never.
	rcv.Rule = func(string, int) (receiver.Fault, bool) {
		return receiver.Fault{Mode: receiver.Unavailable}, true
	}
	for i := range calls {
		calls[i].Body = []byte(fmt.Sprintf(`{"id":"r-%d"}`, i))
	}
	if _, halt := p.SendAll(context.Background(), calls); halt == nil || halt.Cause != "3 retryable in a row" {
		t.Errorf("halt %+v, want 3 retryable in a row", halt)
	}
	p.HaltAfterRetryable = -1
	for i := range calls {
		calls[i].Body = []byte(fmt.Sprintf(`{"id":"s-%d"}`, i))
	}
	sent, halt = p.SendAll(context.Background(), calls)
	if halt != nil {
		t.Errorf("halted with HaltAfterRetryable -1: %+v", halt)
	}
	for _, s := range sent {
		if len(s.Result.Attempts) != replay.DefaultMaxAttempts || !s.DeadLettered {
			t.Errorf("%s: %d attempts, dead-lettered %v", s.Key, len(s.Result.Attempts), s.DeadLettered)
		}
	}
}

// A call that is neither delivered nor recorded says so: the sink failed, or the letter can't
// be stored whole (the others of the batch still are).
func TestProducerUnrecorded(t *testing.T) {
	rcv := &receiver.Receiver{Default: receiver.Fault{Mode: receiver.Status, Status: 410}}
	p, sink, url := producerFixture(t, rcv, &replay.Source{})
	big := `{"x":"` + strings.Repeat("a", model.MaxCellChars) + `"}`
	sent, _ := p.SendAll(context.Background(), []replay.Call{
		{Key: "small", Source: "crm", URL: url, Body: []byte(`{}`)},
		{Key: "big", Source: "crm", URL: url, Body: []byte(big)},
	})
	if !sent[0].DeadLettered || sent[1].DeadLettered || sent[1].Err == nil || !strings.Contains(sent[1].Err.Error(), "50000") {
		t.Errorf("small %+v; big dead-lettered %v err %v", sent[0].DeadLettered, sent[1].DeadLettered, sent[1].Err)
	}
	if ls := sink.letters(); len(ls) != 1 || ls[0].Key != "small" {
		t.Errorf("letters %+v", ls)
	}
	sink.err = errors.New("quota exceeded")
	s := p.Send(context.Background(), replay.Call{Key: "lost?", Source: "crm", URL: url, Body: []byte(`{}`)})
	if s.DeadLettered || s.Err == nil || !strings.Contains(s.Err.Error(), "quota exceeded") || !strings.Contains(s.Err.Error(), `"lost?"`) {
		t.Errorf("sink failure: %+v", s)
	}
	p.Sink = nil
	if s := p.Send(context.Background(), replay.Call{Key: "nosink", Source: "crm", URL: url, Body: []byte(`{}`)}); s.Err == nil {
		t.Errorf("no sink: %+v", s)
	}
}

// A call whose given key disagrees with its payload's key field is the caller's mistake: sent,
// the receiver would see two keys for one call; recorded, a replay would refuse the row for
// good. It is neither sent nor recorded, and the caller keeps it (Err), alone or in a batch.
func TestProducerRefusesAKeyThatDisagreesWithThePayload(t *testing.T) {
	rcv := &receiver.Receiver{}
	p, sink, url := producerFixture(t, rcv, &replay.Source{})
	p.KeyFields = map[string]string{"crm": "id"}
	s := p.Send(context.Background(), replay.Call{Key: "K", Source: "crm", URL: url, Body: []byte(`{"id":"X"}`)})
	if s.Err == nil || s.DeadLettered || s.Result.Outcome != replay.Refused || !strings.Contains(s.Err.Error(), `"X"`) {
		t.Errorf("sent %+v", s)
	}
	sent, _ := p.SendAll(context.Background(), []replay.Call{
		{Key: "K", Source: "crm", URL: url, Body: []byte(`{"id":"X"}`)},
		{Key: "Y", Source: "crm", URL: url, Body: []byte(`{"id":"Y"}`)}, // agrees: sent
	})
	if sent[0].Err == nil || sent[0].DeadLettered || !sent[1].Delivered() {
		t.Errorf("batch: %+v", sent)
	}
	if n := len(rcv.Attempts()); n != 1 {
		t.Errorf("the receiver saw %d attempts, want only the agreeing call's", n)
	}
	if n := len(sink.letters()); n != 0 {
		t.Errorf("%d letters recorded, want none", n)
	}
}
