package cli

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
	"github.com/triage-dev/triage/replay/replaytest"
	"github.com/triage-dev/triage/tui"
)

// recordingStore applies every edit and remembers them.
type recordingStore struct {
	mu    sync.Mutex
	edits []model.Edit
}

func (s *recordingStore) Apply(_ context.Context, edits []model.Edit) (model.ApplyResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var res model.ApplyResult
	for _, e := range edits {
		s.edits = append(s.edits, e)
		res.Applied = append(res.Applied, model.Applied{Edit: e, Row: 2})
	}
	return res, nil
}

func adapterTable(t *testing.T, rows ...[]any) *model.Table {
	t.Helper()
	grid := append([][]any{replayHeader}, rows...)
	tab, err := model.Decode(model.DefaultTabConfig(model.RoleDeadLetter), grid, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func allRecords(t *model.Table) []*model.Record {
	out := make([]*model.Record, len(t.Records))
	for i := range t.Records {
		out[i] = &t.Records[i]
	}
	return out
}

func TestReplayAdapterPlan(t *testing.T) {
	sources := map[string]*replay.Source{
		"crm":  {Name: "crm", URLPrefixes: []string{"https://crm.example.com/v1/"}, Headers: map[string]string{"Authorization": "env:CRM_TOKEN"}},
		"shop": {Name: "shop", URLPrefixes: []string{"https://shop.example.com/"}},
	}
	tab := adapterTable(t,
		[]any{46000.1, "crm", "https://crm.example.com/v1/contacts", `{"a":1}`, "", "", "", "k1", "dead", ""},
		[]any{46000.2, "crm", "https://crm.example.com/v1/contacts?x=1", `{"a":2}`, "", "", "PUT", "k2", "", ""},
		[]any{46000.3, "shop", "https://shop.example.com/hooks/order", `{"a":3}`, "", "", "", "k3", "dead", ""},
		[]any{46000.4, "crm", "https://evil.example.com/v1/contacts", `{"a":4}`, "", "", "", "k4", "dead", ""},
		[]any{46000.5, "crm", "https://crm.example.com/v1/contacts", `{"a":5}`, "", "", "", "k5", "delivered", ""},
	)
	a := &replayAdapter{client: newReplayClient(sources, func(k string) string { return map[string]string{"CRM_TOKEN": "x"}[k] }),
		sources: sources, now: time.Now}
	p := a.Plan(tab, allRecords(tab))
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

func TestReplayAdapterReplayTranslates(t *testing.T) {
	rcv := &replaytest.Receiver{Rule: func(key string, _ int) (replaytest.Fault, bool) {
		if key == "k2" {
			return replaytest.Fault{Mode: replaytest.Status, Status: http.StatusGone}, true
		}
		return replaytest.Fault{}, false
	}}
	sources := map[string]*replay.Source{"crm": {Name: "crm", URLPrefixes: []string{"https://crm.example.com/v1/"}}}
	client := newReplayClient(sources, func(string) string { return "" })
	client.HTTP = &http.Client{Transport: replaytest.Transport(rcv)}
	st := &recordingStore{}
	a := &replayAdapter{client: client, store: st, concurrency: 1}
	tab := adapterTable(t,
		[]any{46000.1, "crm", "https://crm.example.com/v1/contacts", `{"a":1}`, "", "", "", "k1", "dead", ""},
		[]any{46000.2, "crm", "https://crm.example.com/v1/contacts", `{"a":2}`, "", "", "", "k2", "dead", ""},
		[]any{46000.3, "crm", "https://crm.example.com/v1/contacts", `{"a":3}`, "", "", "", "k3", "discarded", ""},
	)
	var mu sync.Mutex
	var events []tui.ReplayProgress
	rep := a.Replay(context.Background(), tab, allRecords(tab), func(p tui.ReplayProgress) {
		mu.Lock()
		events = append(events, p)
		mu.Unlock()
	})
	if rep.Counts["delivered"] != 1 || rep.Counts["rejected"] != 1 || rep.Halt != nil || rep.Cancelled {
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
		sawSending = sawSending || e.State == replay.StateSending
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
	if rep := a.Replay(context.Background(), tab, allRecords(tab)[:1], nil); rep.Counts["duplicate"] != 1 {
		t.Errorf("report %+v", rep)
	}
}

func TestReplayAdapterHaltReport(t *testing.T) {
	sources := map[string]*replay.Source{"billing": {Name: "billing", URLPrefixes: []string{"https://pay.example.com/"},
		Headers: map[string]string{"Authorization": "env:PAY_TOKEN"}}}
	// One call at a time: with more, every row may be under way before the first answer halts.
	a := &replayAdapter{client: newReplayClient(sources, func(string) string { return "" }), store: &recordingStore{}, concurrency: 1}
	tab := adapterTable(t,
		[]any{46000.1, "billing", "https://pay.example.com/x", `{}`, "", "", "", "b1", "dead", ""},
		[]any{46000.2, "billing", "https://pay.example.com/x", `{}`, "", "", "", "b2", "dead", ""},
		[]any{46000.3, "billing", "https://pay.example.com/x", `{}`, "", "", "", "b3", "dead", ""},
	)
	var halt *tui.ReplayHalt
	rep := a.Replay(context.Background(), tab, allRecords(tab), func(p tui.ReplayProgress) {
		if p.Halt != nil {
			halt = p.Halt
		}
	})
	if rep.Halt == nil || rep.Halt.Cause != "systemic" || rep.Halt.Source != "billing" || !strings.Contains(rep.Halt.Detail, "PAY_TOKEN") {
		t.Fatalf("halt %+v", rep.Halt)
	}
	if halt == nil || *halt != *rep.Halt {
		t.Errorf("progress halt %+v", halt)
	}
	if len(rep.NotAttempted) == 0 {
		t.Error("no row reported as not attempted")
	}
}

func TestReplayAdapterDestination(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example.com/v1/x?q=1":   "https://a.example.com/v1/",
		"http://127.0.0.1:8080/macros/s/e": "http://127.0.0.1:8080/macros/s/",
		"https://a.example.com":            "https://a.example.com/",
		"not a url":                        "not a url",
	} {
		if got := destination(in); got != want {
			t.Errorf("destination(%q) = %q, want %q", in, got, want)
		}
	}
}

// readOnlyStore is a store opened read-only.
type readOnlyStore struct{ recordingStore }

func (*readOnlyStore) ReadOnly() bool { return true }

func TestReplayAdapterReadOnlySendsNothing(t *testing.T) {
	rcv := replaytest.NewReceiver()
	sources := map[string]*replay.Source{"crm": {Name: "crm", URLPrefixes: []string{"https://crm.example.com/v1/"}}}
	client := newReplayClient(sources, func(string) string { return "" })
	client.HTTP = &http.Client{Transport: replaytest.Transport(rcv)}
	st := &readOnlyStore{}
	a := &replayAdapter{client: client, store: st}
	tab := adapterTable(t, []any{46000.1, "crm", "https://crm.example.com/v1/contacts", `{"a":1}`, "", "", "", "k1", "dead", ""})
	// The plan still says what would be sent (the dry-run preview works read-only).
	if p := a.Plan(tab, allRecords(tab)); len(p.Calls) != 1 || len(p.Refused) != 0 {
		t.Errorf("plan %+v", p)
	}
	rep := a.Replay(context.Background(), tab, allRecords(tab), nil)
	if len(rep.Refused) != 1 || rep.Counts["refused"] != 1 || len(rcv.Attempts()) != 0 || len(st.edits) != 0 {
		t.Errorf("report %+v, %d requests, %d edits", rep, len(rcv.Attempts()), len(st.edits))
	}
}
