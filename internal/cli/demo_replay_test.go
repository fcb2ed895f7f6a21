package cli

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/demo"
	"github.com/triage-dev/triage/replay"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// demoFixture is the demo as `triage demo` wires it: the embedded workbook in an emulator on
// a loopback port, the demo receivers on theirs, a sheets.Store, and the TUI's replayer.
type demoFixture struct {
	emu     *emulator.Emulator
	rcv     *demo.Receivers
	sources map[string]*replay.Source
	st      *sheets.Store
	id      string
}

func startDemoFixture(t *testing.T) *demoFixture {
	t.Helper()
	ctx := context.Background()
	wb, err := demo.Workbook(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	emu := emulator.New()
	rcv, err := demo.StartReceivers(ctx, emu, wb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rcv.Stop)
	emu.AddWorkbook(wb)
	url, stop, err := emulator.Serve(ctx, "127.0.0.1:0", emu)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop() })
	svc, _, err := sheets.Connect(ctx, sheets.AuthOptions{Endpoint: url})
	if err != nil {
		t.Fatal(err)
	}
	st := sheets.New(ctx, svc, sheets.Options{SpreadsheetID: wb.SpreadsheetID,
		Tabs: demo.WithBodyKeyFields(demo.Tabs(), rcv.BodyKeyFields), Actor: "demo@localhost"})
	sources, err := buildSources(rcv.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &demoFixture{emu: emu, rcv: rcv, sources: sources, st: st, id: wb.SpreadsheetID}
}

// runner is the TUI's replayer, reading secrets from env, with a fast backoff.
func (f *demoFixture) runner(env map[string]string) *replay.Runner {
	c := newReplayClient(f.sources, func(k string) string { return env[k] })
	c.Base, c.Cap = 5*time.Millisecond, 50*time.Millisecond
	return &replay.Runner{Client: c, Store: f.st, Concurrency: 4}
}

func (f *demoFixture) deadLetters(t *testing.T) *model.Table {
	t.Helper()
	wb, err := f.st.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tab := wb.Tab(model.RoleDeadLetter)
	if tab == nil {
		t.Fatalf("no dead-letter tab: missing %v broken %v", wb.Missing, wb.Broken)
	}
	return tab
}

func mustRecord(t *testing.T, tab *model.Table, id string) *model.Record {
	t.Helper()
	i := tab.Index(id)
	if i < 0 {
		t.Fatalf("no row %q in %s", id, tab.Config.Name)
	}
	return &tab.Records[i]
}

// inboxWithID returns the Inbox rows whose ID cell is id, and the Inbox's row count.
func (f *demoFixture) inboxWithID(id string) ([][]any, int) {
	rows := f.emu.Cells(f.id, "Inbox")
	var out [][]any
	for _, r := range rows {
		if len(r) > 5 && r[5] == id {
			out = append(out, r)
		}
	}
	return out, len(rows)
}

func TestDemoReplayContactFormAppendsToInboxOnce(t *testing.T) {
	f := startDemoFixture(t)
	a := f.runner(nil)
	_, before := f.inboxWithID("cf-7f3a1c")
	tab := f.deadLetters(t)
	rec := mustRecord(t, tab, "cf-7f3a1c")

	p := a.Plan(tab, []*model.Record{rec})
	if len(p.Calls) != 1 || len(p.Sources) != 1 || p.Sources[0] != demo.ContactForm || len(p.Destinations) != 1 ||
		!strings.HasPrefix(p.Destinations[0], "http://127.0.0.1:") || !strings.HasSuffix(p.Destinations[0], "/macros/s/AKfycbzD3m0Qx7rT2vN8pLk4Hs9WcYe1uJf6oGiBq5aR0tXyZ/") {
		t.Fatalf("plan %+v", p)
	}
	var mu sync.Mutex
	var last model.ReplayEvent
	rep := a.Replay(context.Background(), tab, []*model.Record{rec}, func(pr model.ReplayEvent) {
		mu.Lock()
		last = pr
		mu.Unlock()
	})
	if rep.Counts["delivered"] != 1 || rep.Halted != nil || len(rep.WriteErrors)+len(rep.WriteConflicts) != 0 {
		t.Fatalf("report %+v", rep)
	}
	if last.Done != 1 || last.Row.State != model.StateDelivered {
		t.Errorf("last progress %+v", last)
	}
	got, after := f.inboxWithID("cf-7f3a1c")
	if after != before+1 || len(got) != 1 {
		t.Fatalf("Inbox went from %d to %d rows, %d with the ID", before, after, len(got))
	}
	row := got[0]
	if row[1] != "Priya Raman" || row[2] != "priya.raman@example.com" || !strings.HasPrefix(row[3].(string), "Hi! Do you take on small e-commerce") || row[4] != "new" {
		t.Errorf("Inbox row %v", row)
	}
	berlin, err := time.LoadLocation("Europe/Berlin") // the demo workbook's time zone
	if err != nil {
		t.Fatal(err)
	}
	if ts, ok := model.ParseTime(row[0], berlin); !ok || time.Since(ts) > 5*time.Minute || time.Since(ts) < -5*time.Minute {
		t.Errorf("Inbox timestamp %v", row[0])
	}
	// Apps Script's hop: a POST that acted, then a GET of the echo URL without the body.
	atts := f.rcv.ContactForm.Attempts()
	if len(atts) != 2 || atts[0].Method != "POST" || atts[0].Echo || atts[1].Method != "GET" || !atts[1].Echo || len(atts[1].Body) != 0 {
		t.Errorf("contact-form attempts %+v", atts)
	}
	if errs := f.rcv.InboxFailures(); len(errs) != 0 {
		t.Errorf("append failures %v", errs)
	}
	if s := f.deadLetters(t).Get(mustRecord(t, f.deadLetters(t), "cf-7f3a1c"), model.FStatus); s != "delivered" {
		t.Errorf("dead letter status %q after the replay", s)
	}

	// The write-back is lost (someone sets the row back to dead): replaying again is a
	// duplicate, and the Inbox still has the message once.
	cells := f.emu.Cells(f.id, "failed_calls")
	for i, r := range cells {
		if len(r) > 7 && r[7] == "cf-7f3a1c" {
			if err := f.emu.SetCell(f.id, "failed_calls", i+1, 8, "dead"); err != nil {
				t.Fatal(err)
			}
		}
	}
	tab = f.deadLetters(t)
	rep = a.Replay(context.Background(), tab, []*model.Record{mustRecord(t, tab, "cf-7f3a1c")}, nil)
	if rep.Counts["duplicate"] != 1 || len(rep.Rows) != 1 || rep.Rows[0].State != model.StateDuplicate {
		t.Errorf("second replay %+v", rep)
	}
	if got, n := f.inboxWithID("cf-7f3a1c"); n != before+1 || len(got) != 1 {
		t.Errorf("after a second replay the Inbox has %d rows (was %d), %d with the ID", n, before, len(got))
	}
	if e := f.rcv.ContactForm.Effects(); e["cf-7f3a1c"] != 1 {
		t.Errorf("effects %v", e)
	}

	// A message that looks like a formula is appended as text (RAW).
	rep = a.Replay(context.Background(), tab, []*model.Record{mustRecord(t, tab, "cf-92c5d0")}, nil)
	if rep.Counts["delivered"] != 1 {
		t.Fatalf("formula message: %+v", rep)
	}
	rows := f.emu.Cells(f.id, "Inbox")
	for i, r := range rows {
		if len(r) > 5 && r[5] == "cf-92c5d0" {
			if !strings.HasPrefix(r[3].(string), "=HYPERLINK(") || f.emu.Formula(f.id, "Inbox", i+1, 3) {
				t.Errorf("formula message stored as %q (formula=%v)", r[3], f.emu.Formula(f.id, "Inbox", i+1, 3))
			}
		}
	}
	for _, o := range f.emu.ValueInputOptions() {
		if o != "RAW" {
			t.Errorf("a write used %q", o)
		}
	}
	if n := f.emu.Count(emulator.MethodValuesAppend); n != 2 {
		t.Errorf("%d values.append, want 2 (one per new message)", n)
	}
}

func TestDemoReplayEveryOutcome(t *testing.T) {
	f := startDemoFixture(t)
	tab := f.deadLetters(t)
	var others, billing []*model.Record
	for i := range tab.Records {
		r := &tab.Records[i]
		if tab.Get(r, model.FSource) == demo.Billing {
			billing = append(billing, r)
		} else {
			others = append(others, r)
		}
	}
	flaky := 0
	for _, r := range others {
		if tab.Get(r, model.FSource) == demo.CRM && r.Status == model.StatusDead && r.ID != demo.CRMDownKey && r.ID != "crm-evt-2049" && demo.Flaky(r.ID) {
			flaky++
		}
	}
	if flaky == 0 {
		t.Fatal("no crm row of the demo is flaky: the demo would show no duplicate")
	}
	rep := f.runner(nil).Replay(context.Background(), tab, others, nil)
	if rep.Halted != nil {
		t.Fatalf("halted: %+v", rep.Halted)
	}
	skipped, refused := 0, 0
	for _, r := range rep.Refused {
		if r.Skipped {
			skipped++
		} else {
			refused++
		}
	}
	if rep.Counts["delivered"]+rep.Counts["duplicate"] != 13 || rep.Counts["duplicate"] != flaky || rep.Counts["rejected"] != 1 ||
		rep.Counts["retryable"] != 1 || refused != 2 || skipped != 5 {
		t.Errorf("counts %v, %d refused, %d skipped (flaky %d)\nrefused %+v", rep.Counts, refused, skipped, flaky, rep.Refused)
	}
	for k, n := range f.rcv.CRM.Effects() {
		if n != 1 {
			t.Errorf("crm acted %d times on %s", n, k)
		}
	}
	tab = f.deadLetters(t)
	if s := tab.Get(mustRecord(t, tab, demo.WarehouseRejectKey), model.FStatus); s != model.StatusRejected {
		t.Errorf("the rejected record is %q", s)
	}
	if s := tab.Get(mustRecord(t, tab, "wh-order-1044"), model.FStatus); s != model.StatusDelivered {
		t.Errorf("the non-JSON payload is %q", s)
	}

	// billing without its secret: systemic before anything is sent, naming the secret.
	rep = f.runner(nil).Replay(context.Background(), tab, billing, nil)
	if rep.Halted == nil || rep.Halted.Source != demo.Billing || !strings.Contains(rep.Halted.Detail, demo.BillingEnv) {
		t.Fatalf("billing without a token: %+v", rep)
	}
	if n := len(f.rcv.BillingOK.Attempts()) + len(f.rcv.BillingDenied.Attempts()); n != 0 {
		t.Errorf("billing got %d requests without its secret", n)
	}
	// With a wrong one: 401, systemic, naming the secret.
	tab = f.deadLetters(t)
	billing = billing[:0]
	for i := range tab.Records {
		if r := &tab.Records[i]; tab.Get(r, model.FSource) == demo.Billing {
			billing = append(billing, r)
		}
	}
	rep = f.runner(map[string]string{demo.BillingEnv: "wrong"}).Replay(context.Background(), tab, billing, nil)
	if rep.Halted == nil || rep.Halted.Cause != "systemic" || !strings.Contains(rep.Halted.Detail, "401") || !strings.Contains(rep.Halted.Detail, demo.BillingEnv) {
		t.Fatalf("billing with a wrong token: %+v", rep.Halted)
	}
	if len(f.rcv.BillingDenied.Attempts()) == 0 || len(f.rcv.BillingOK.Attempts()) != 0 {
		t.Errorf("billing attempts: denied %d ok %d", len(f.rcv.BillingDenied.Attempts()), len(f.rcv.BillingOK.Attempts()))
	}
	// With the right one, billing delivers.
	tab = f.deadLetters(t)
	billing = billing[:0]
	for i := range tab.Records {
		if r := &tab.Records[i]; tab.Get(r, model.FSource) == demo.Billing {
			billing = append(billing, r)
		}
	}
	rep = f.runner(map[string]string{demo.BillingEnv: demo.BillingSecret}).Replay(context.Background(), tab, billing, nil)
	if rep.Halted != nil || rep.Counts["delivered"] != 3 {
		t.Errorf("billing with the token: %+v", rep)
	}
}

func TestDemoFailedCallsSheet(t *testing.T) {
	now := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	wb, err := demo.Workbook(now)
	if err != nil {
		t.Fatal(err)
	}
	var sh *emulator.Sheet
	for _, s := range wb.Sheets {
		if s.Title == "failed_calls" {
			sh = s
		}
	}
	if sh == nil {
		t.Fatal("the demo has no failed_calls tab")
	}
	tc := demo.WithBodyKeyFields(demo.Tabs(), map[string]string{demo.ContactForm: "id"})[1]
	tab, err := model.Decode(tc, sh.Rows, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tab.Records); n < 22 || n > 30 {
		t.Errorf("%d failed calls, want ~25", n)
	}
	sources := map[string]int{}
	var newest time.Time
	var minted, mismatch, notJSON int
	for i := range tab.Records {
		r := &tab.Records[i]
		sources[tab.Get(r, model.FSource)]++
		if r.Time.After(newest) {
			newest = r.Time
		}
		if r.KeyOrigin == model.KeyMinted {
			minted++
		}
		for _, p := range r.Problems {
			mismatch += strings.Count(p, "disagrees with key cell")
			notJSON += strings.Count(p, "not valid JSON")
		}
		if u := tab.Get(r, model.FURL); !strings.HasPrefix(u, "{{") && !strings.HasPrefix(u, "https://crm.example.net/") {
			t.Errorf("row %d url %q has no placeholder", r.Row, u)
		}
	}
	for _, s := range []string{demo.ContactForm, demo.CRM, demo.Billing, demo.Warehouse} {
		if sources[s] == 0 {
			t.Errorf("no %s rows", s)
		}
	}
	c := tab.Counts()
	if c["delivered"] < 2 || c["rejected"] != 1 || c["discarded"] != 1 || minted == 0 || mismatch != 1 || notJSON != 1 {
		t.Errorf("statuses %v, minted %d, mismatch %d, not JSON %d", c, minted, mismatch, notJSON)
	}
	if age := now.Sub(newest); age < 0 || age > 24*time.Hour {
		t.Errorf("newest failed call is %v old", age)
	}

	// Starting the receivers rewrites every placeholder to a loopback URL.
	emu := emulator.New()
	rcv, err := demo.StartReceivers(context.Background(), emu, wb)
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Stop()
	for _, row := range sh.Rows[1:] {
		if u, _ := row[2].(string); strings.Contains(u, "{{") {
			t.Errorf("placeholder left: %q", u)
		}
	}
	built, err := buildSources(rcv.Config)
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range built {
		if err := src.Validate(); err != nil || !strings.HasPrefix(src.URLPrefixes[0], "http://127.0.0.1:") {
			t.Errorf("source %s: %v %v", name, src.URLPrefixes, err)
		}
	}
	if rcv.BodyKeyFields[demo.ContactForm] != "id" || len(rcv.BodyKeyFields) != 1 {
		t.Errorf("body key fields %v", rcv.BodyKeyFields)
	}
}
