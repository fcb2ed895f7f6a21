package replay_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// editLog is a store that applies every edit and remembers them.
type editLog struct {
	mu    sync.Mutex
	edits []model.Edit
}

func (s *editLog) Apply(_ context.Context, edits []model.Edit) (model.ApplyResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var res model.ApplyResult
	for _, e := range edits {
		s.edits = append(s.edits, e)
		res.Applied = append(res.Applied, model.Applied{Edit: e, Row: 2})
	}
	return res, nil
}

var runnerHeader = []any{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}

func runnerTable(t *testing.T, rows ...[]any) *model.Table {
	t.Helper()
	grid := append([][]any{runnerHeader}, rows...)
	tab, err := model.Decode(model.DefaultTabConfig(model.RoleDeadLetter), grid, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestRunnerPlan(t *testing.T) {
	sources := map[string]*replay.Source{
		"crm":  {Name: "crm", URLPrefixes: []string{"https://crm.example.com/v1/"}, Headers: map[string]string{"Authorization": "env:CRM_TOKEN"}},
		"shop": {Name: "shop", URLPrefixes: []string{"https://shop.example.com/"}},
	}
	tab := runnerTable(t,
		[]any{46000.1, "crm", "https://crm.example.com/v1/contacts", `{"a":1}`, "", "", "", "k1", "dead", ""},
		[]any{46000.2, "crm", "https://crm.example.com/v1/contacts?x=1", `{"a":2}`, "", "", "PUT", "k2", "", ""},
		[]any{46000.3, "shop", "https://shop.example.com/hooks/order", `{"a":3}`, "", "", "", "k3", "dead", ""},
		[]any{46000.4, "crm", "https://evil.example.com/v1/contacts", `{"a":4}`, "", "", "", "k4", "dead", ""},
		[]any{46000.5, "crm", "https://crm.example.com/v1/contacts", `{"a":5}`, "", "", "", "k5", "delivered", ""},
	)
	a := &replay.Runner{Client: &replay.Client{Sources: sources, Getenv: func(k string) string { return map[string]string{"CRM_TOKEN": "x"}[k] }}}
	p := a.Plan(tab, records(tab))
	if len(p.Calls) != 3 {
		t.Fatalf("calls %+v", p.Calls)
	}
	if c := p.Calls[1]; c.ID != "k2" || c.Method != "PUT" || c.Row != 3 || c.Source != "crm" || !slices.Equal(c.Headers, []string{"Authorization: env:CRM_TOKEN (set)"}) {
		t.Errorf("call %+v", c)
	}
	if !slices.Equal(p.Sources, []string{"crm", "shop"}) {
		t.Errorf("sources %v", p.Sources)
	}
	if !slices.Equal(p.Destinations, []string{"https://crm.example.com/v1/", "https://shop.example.com/hooks/"}) {
		t.Errorf("destinations %v", p.Destinations)
	}
	if len(p.Refused) != 2 || p.Refused[0].ID != "k4" || p.Refused[0].Skipped || !strings.Contains(p.Refused[0].Reason, "not under any allowed prefix") ||
		p.Refused[1].ID != "k5" || !p.Refused[1].Skipped {
		t.Errorf("refused %+v", p.Refused)
	}
}

func TestRunnerReplayTranslates(t *testing.T) {
	rcv := &receiver.Receiver{Rule: func(key string, _ int) (receiver.Fault, bool) {
		if key == "k2" {
			return receiver.Fault{Mode: receiver.Status, Status: http.StatusGone}, true
		}
		return receiver.Fault{}, false
	}}
	sources := map[string]*replay.Source{"crm": {Name: "crm", URLPrefixes: []string{"https://crm.example.com/v1/"}}}
	client := &replay.Client{Sources: sources, Getenv: func(string) string { return "" }}
	client.HTTP = &http.Client{Transport: receiver.Transport(rcv)}
	st := &editLog{}
	a := &replay.Runner{Client: client, Store: st, Concurrency: 1}
	tab := runnerTable(t,
		[]any{46000.1, "crm", "https://crm.example.com/v1/contacts", `{"a":1}`, "", "", "", "k1", "dead", ""},
		[]any{46000.2, "crm", "https://crm.example.com/v1/contacts", `{"a":2}`, "", "", "", "k2", "dead", ""},
		[]any{46000.3, "crm", "https://crm.example.com/v1/contacts", `{"a":3}`, "", "", "", "k3", "discarded", ""},
	)
	var mu sync.Mutex
	var events []model.ReplayEvent
	rep := a.Replay(context.Background(), tab, records(tab), func(p model.ReplayEvent) {
		mu.Lock()
		events = append(events, p)
		mu.Unlock()
	})
	if rep.Counts["delivered"] != 1 || rep.Counts["rejected"] != 1 || rep.Counts["skipped"] != 1 || rep.Skipped() != 1 || rep.Halted != nil || rep.Cancelled {
		t.Errorf("report %+v", rep)
	}
	if len(rep.Rows) != 2 || rep.Rows[1].State != "rejected" || !strings.Contains(rep.Rows[1].Detail, "410") {
		t.Errorf("rows %+v", rep.Rows)
	}
	if len(rep.Refused) != 1 || !rep.Refused[0].Skipped {
		t.Errorf("refused %+v", rep.Refused)
	}
	last := events[len(events)-1]
	if last.Done != 2 || last.Total != 2 || last.Counts["delivered"] != 1 || last.Counts["rejected"] != 1 {
		t.Errorf("last event %+v", last)
	}
	sawSending := false
	for _, e := range events {
		sawSending = sawSending || e.Row.State == model.StateSending
	}
	if !sawSending {
		t.Errorf("no sending event: %+v", events)
	}
	// Two checks before sending (each row's status and key as loaded) and two write-backs.
	writeBacks := 0
	for _, e := range st.edits {
		if _, ok := e.Set[model.FAttempts]; ok {
			writeBacks++
		}
	}
	if len(st.edits) != 4 || writeBacks != 2 {
		t.Errorf("edits %+v", st.edits)
	}
	// A nil progress func is allowed; the receiver already acted on k1.
	if rep := a.Replay(context.Background(), tab, records(tab)[:1], nil); rep.Counts["duplicate"] != 1 {
		t.Errorf("report %+v", rep)
	}
}

func TestRunnerHaltReport(t *testing.T) {
	sources := map[string]*replay.Source{"billing": {Name: "billing", URLPrefixes: []string{"https://pay.example.com/"},
		Headers: map[string]string{"Authorization": "env:PAY_TOKEN"}}}
	// One call at a time: with more, every row may be under way before the first answer halts.
	a := &replay.Runner{Client: &replay.Client{Sources: sources, Getenv: func(string) string { return "" }}, Store: &editLog{}, Concurrency: 1}
	tab := runnerTable(t,
		[]any{46000.1, "billing", "https://pay.example.com/x", `{}`, "", "", "", "b1", "dead", ""},
		[]any{46000.2, "billing", "https://pay.example.com/x", `{}`, "", "", "", "b2", "dead", ""},
		[]any{46000.3, "billing", "https://pay.example.com/x", `{}`, "", "", "", "b3", "dead", ""},
	)
	var halt *model.Halt
	rep := a.Replay(context.Background(), tab, records(tab), func(p model.ReplayEvent) {
		if p.Halted != nil {
			halt = p.Halted
		}
	})
	if rep.Halted == nil || rep.Halted.Cause != "systemic" || rep.Halted.Source != "billing" || !strings.Contains(rep.Halted.Detail, "PAY_TOKEN") {
		t.Fatalf("halt %+v", rep.Halted)
	}
	if halt == nil || *halt != *rep.Halted {
		t.Errorf("progress halt %+v", halt)
	}
	if len(rep.NotAttempted) == 0 {
		t.Error("no row reported as not attempted")
	}
}

// readOnlyStore is a store opened read-only.
type readOnlyStore struct{ editLog }

func (*readOnlyStore) ReadOnly() bool { return true }

func TestRunnerReadOnlySendsNothing(t *testing.T) {
	rcv := receiver.New()
	sources := map[string]*replay.Source{"crm": {Name: "crm", URLPrefixes: []string{"https://crm.example.com/v1/"}}}
	client := &replay.Client{Sources: sources, Getenv: func(string) string { return "" }}
	client.HTTP = &http.Client{Transport: receiver.Transport(rcv)}
	st := &readOnlyStore{}
	a := &replay.Runner{Client: client, Store: st}
	tab := runnerTable(t, []any{46000.1, "crm", "https://crm.example.com/v1/contacts", `{"a":1}`, "", "", "", "k1", "dead", ""})
	// The plan still says what would be sent (the dry-run preview works read-only).
	if p := a.Plan(tab, records(tab)); len(p.Calls) != 1 || len(p.Refused) != 0 {
		t.Errorf("plan %+v", p)
	}
	rep := a.Replay(context.Background(), tab, records(tab), nil)
	if len(rep.Refused) != 1 || rep.Counts["refused"] != 1 || len(rcv.Attempts()) != 0 || len(st.edits) != 0 {
		t.Errorf("report %+v, %d requests, %d edits", rep, len(rcv.Attempts()), len(st.edits))
	}
}
