package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	sheetsapi "google.golang.org/api/sheets/v4"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// The demo's dead-letter sources (the `source` cells of the demo's failed_calls tab).
const (
	// ContactForm is an Apps Script web app (preset apps-script, key in the body's "id"):
	// it acts, then answers 302 to an echo URL on another host, as Apps Script does. Its
	// effect appends the message to the demo Inbox, once per key.
	ContactForm = "contact-form"
	// CRM is flaky: on the first attempt of about half the keys it acts and then drops
	// the connection (the retry gets "duplicate"); one key (CRMDownKey) always gets 503.
	CRM = "crm"
	// Billing wants `Authorization: <DEMO_BILLING_TOKEN>`; without the right token it
	// answers 401, which halts a run (systemic).
	Billing = "billing"
	// Warehouse answers 422 to one record (WarehouseRejectKey); its config maps 422
	// to rejected, so only that row becomes sticky.
	Warehouse = "warehouse"

	BillingEnv         = "DEMO_BILLING_TOKEN"
	BillingSecret      = "demo-billing-secret"
	CRMDownKey         = "crm-evt-2047"
	WarehouseRejectKey = "wh-order-1043"
)

// demoLatency makes each demo receiver a little slow, so progress is visible.
const demoLatency = 120 * time.Millisecond

// StartReceivers starts the demo's in-process destinations of replayed calls, each a
// receiver.Receiver behind a real loopback listener, and rewrites the URL placeholders of
// wb's failed_calls tab ("{{contact-form}}/macros/s/.../exec", "{{crm}}/v1/contacts", ...) to
// their loopback addresses. Call it before emu.AddWorkbook(wb): the emulator serves a copy.
//
// The Receivers hold the config of the sources to replay with (the CLI builds them as
// `triage replay` does), the payload key field of each source that carries its key in the
// body (for the dead-letter TabConfig's BodyKeyFields), and Stop, which shuts every listener
// down.
//
// The contact-form receiver appends each new message to the Inbox the way the real script
// does, through the Sheets API: `values.append` with valueInputOption=RAW (a message like
// "=HYPERLINK(...)" stays text), here sent by the Sheets Go client to emu over an in-memory
// transport. The receiver dedupes by key, so replaying a message twice appends it once.

// Receivers are the demo's running destinations (tests look at what they received).
type Receivers struct {
	ContactForm, CRM, BillingOK, BillingDenied, Warehouse *receiver.Receiver
	// Config holds the [sources] of the demo: their loopback url_prefixes, presets, keys.
	Config *config.Config
	// BodyKeyFields maps a source to the payload field that carries its key.
	BodyKeyFields map[string]string
	// Stop shuts every receiver down; it may be called more than once.
	Stop func()

	inbox *inbox
}

// InboxFailures are the contact form's appends to the Inbox that failed.
func (r *Receivers) InboxFailures() []error { return r.inbox.failures() }

func StartReceivers(ctx context.Context, emu *emulator.Emulator, wb *emulator.Workbook) (*Receivers, error) {
	if emu == nil || wb == nil {
		return nil, errors.New("demo receivers: no emulator or workbook")
	}
	svc, _, err := sheets.Connect(ctx, sheets.AuthOptions{Endpoint: "http://sheets.demo.invalid/",
		HTTPClient: &http.Client{Transport: receiver.Transport(emu), Timeout: 30 * time.Second}})
	if err != nil {
		return nil, fmt.Errorf("demo receivers: the contact form's Sheets client: %w", err)
	}
	inbox := &inbox{svc: svc, id: wb.SpreadsheetID, tab: model.DefaultTabName(model.RoleInbox), loc: time.UTC}
	if loc, lerr := time.LoadLocation(wb.TimeZone); lerr == nil && wb.TimeZone != "" {
		inbox.loc = loc
	}

	// Listen first, configure, then serve: no handler runs before its fields are set.
	names := []string{ContactForm, "contact-form-echo", CRM, Billing, Warehouse}
	lns := map[string]net.Listener{}
	closeAll := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	base := map[string]string{}
	for _, n := range names {
		ln, lerr := net.Listen("tcp", "127.0.0.1:0")
		if lerr != nil {
			closeAll()
			return nil, fmt.Errorf("demo receivers: listen on loopback for %s: %w", n, lerr)
		}
		lns[n] = ln
		base[n] = "http://" + ln.Addr().String()
	}

	contact := &receiver.Receiver{
		BodyKeyField: "id",
		Default:      receiver.Fault{Mode: receiver.RedirectAfterAct},
		Latency:      demoLatency,
		EchoBase:     base["contact-form-echo"],
		OnEffect: func(key string, body []byte) {
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
			defer cancel()
			inbox.append(actx, key, body)
		},
	}
	crm := &receiver.Receiver{
		Latency: demoLatency,
		Rule: func(key string, n int) (receiver.Fault, bool) {
			switch {
			case key == CRMDownKey:
				return receiver.Fault{Mode: receiver.Unavailable}, true
			case n == 1 && Flaky(key):
				return receiver.Fault{Mode: receiver.DropAfterAct}, true
			}
			return receiver.Fault{}, false
		},
	}
	billingOK := &receiver.Receiver{Latency: demoLatency}
	billingDenied := &receiver.Receiver{Latency: demoLatency, Default: receiver.Fault{Mode: receiver.Unauthorized}}
	billing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == BillingSecret {
			billingOK.ServeHTTP(w, r)
			return
		}
		billingDenied.ServeHTTP(w, r)
	})
	warehouse := &receiver.Receiver{
		Latency: demoLatency,
		Rule: func(key string, _ int) (receiver.Fault, bool) {
			if key == WarehouseRejectKey {
				return receiver.Fault{Mode: receiver.Status, Status: http.StatusUnprocessableEntity}, true
			}
			return receiver.Fault{}, false
		},
	}
	handlers := map[string]http.Handler{ContactForm: contact, "contact-form-echo": contact, CRM: crm,
		Billing: billing, Warehouse: warehouse}

	cfg := &config.Config{Sources: map[string]config.SourceSection{
		ContactForm: {
			Preset:           replay.PresetAppsScript,
			URLPrefixes:      []string{base[ContactForm] + "/macros/s/"},
			RedirectPrefixes: []string{base["contact-form-echo"] + "/echo/"},
			Key:              "body:id",
			Timeout:          "10s",
		},
		CRM: {URLPrefixes: []string{base[CRM] + "/v1/"}, Timeout: "5s"},
		Billing: {URLPrefixes: []string{base[Billing] + "/hooks/"}, Timeout: "5s",
			Headers: map[string]string{"Authorization": "env:" + BillingEnv}},
		Warehouse: {URLPrefixes: []string{base[Warehouse] + "/api/"}, Timeout: "5s",
			Outcomes: map[string]string{"422": "rejected"}},
	}}
	bodyKeyFields := map[string]string{}
	for n, s := range cfg.Sources {
		if f := s.BodyKeyField(); f != "" {
			bodyKeyFields[n] = f
		}
	}
	rewriteDemoURLs(wb, map[string]string{ContactForm: base[ContactForm], CRM: base[CRM],
		Billing: base[Billing], Warehouse: base[Warehouse]})

	var stops []func()
	for _, n := range names {
		srv := &http.Server{Handler: handlers[n], ReadHeaderTimeout: 10 * time.Second}
		ln := lns[n]
		go srv.Serve(ln)
		stops = append(stops, func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if srv.Shutdown(sctx) != nil {
				srv.Close()
			}
		})
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			for _, s := range stops {
				s()
			}
		})
	}
	return &Receivers{ContactForm: contact, CRM: crm, BillingOK: billingOK, BillingDenied: billingDenied,
		Warehouse: warehouse, inbox: inbox, Config: cfg, BodyKeyFields: bodyKeyFields, Stop: stop}, nil
}

// Flaky picks the crm keys whose first attempt loses its answer: about half, by hash, so
// minted keys are covered too.
func Flaky(key string) bool {
	h := fnv.New32a()
	h.Write([]byte(key))
	return h.Sum32()%2 == 0
}

// rewriteDemoURLs replaces "{{source}}" in the url cells of wb's dead-letter tab with the
// source's loopback base URL.
func rewriteDemoURLs(wb *emulator.Workbook, bases map[string]string) {
	name := model.DefaultTabName(model.RoleDeadLetter)
	for _, sh := range wb.Sheets {
		if !strings.EqualFold(sh.Title, name) || len(sh.Rows) == 0 {
			continue
		}
		header := make([]string, len(sh.Rows[0]))
		for i, v := range sh.Rows[0] {
			header[i] = model.CellString(v)
		}
		hm, err := model.MapHeaders(model.DefaultTabConfig(model.RoleDeadLetter), header)
		if err != nil {
			return
		}
		col := hm.Col(model.FURL)
		for _, row := range sh.Rows[1:] {
			if col < 0 || col >= len(row) {
				continue
			}
			s, ok := row[col].(string)
			if !ok {
				continue
			}
			for src, b := range bases {
				s = strings.ReplaceAll(s, "{{"+src+"}}", b)
			}
			row[col] = s
		}
	}
}

// inbox is the contact form's side of the demo: it appends a message to the Inbox tab as
// the form's script would.
type inbox struct {
	svc *sheetsapi.Service
	id  string
	tab string
	loc *time.Location

	mu   sync.Mutex
	errs []error
}

// append adds one Inbox row for a contact-form message: the tab's header row is read first,
// so the cells land under their headers wherever the columns are; the write is a
// values.append with valueInputOption=RAW. A failure is kept (see failures): the message is
// then lost, as it would be when a real script's appendRow throws.
func (in *inbox) append(ctx context.Context, key string, body []byte) {
	if err := in.appendRow(ctx, key, body); err != nil {
		in.mu.Lock()
		in.errs = append(in.errs, fmt.Errorf("contact form: append message %s to %q: %w", key, in.tab, err))
		in.mu.Unlock()
	}
}

func (in *inbox) appendRow(ctx context.Context, key string, body []byte) error {
	var msg struct {
		Name    string `json:"name"`
		Email   string `json:"email"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return fmt.Errorf("the payload is not a JSON object: %w", err)
	}
	quoted := emulator.QuoteSheet(in.tab)
	hdr, err := in.svc.Spreadsheets.Values.Get(in.id, quoted+"!1:1").Context(ctx).Do()
	if err != nil {
		return fmt.Errorf("read the header row: %w", err)
	}
	var header []string
	if len(hdr.Values) > 0 {
		for _, v := range hdr.Values[0] {
			header = append(header, model.CellString(v))
		}
	}
	hm, err := model.MapHeaders(model.DefaultTabConfig(model.RoleInbox), header)
	if err != nil {
		return err
	}
	row := make([]any, len(header))
	for i := range row {
		row[i] = ""
	}
	set := func(f model.Field, v any) {
		if c := hm.Col(f); c >= 0 {
			row[c] = v
		}
	}
	set(model.FTimestamp, model.TimeToSerial(time.Now(), in.loc))
	set(model.FName, msg.Name)
	set(model.FEmail, msg.Email)
	set(model.FMessage, msg.Message)
	set(model.FStatus, model.StatusNew)
	set(model.FID, key)
	_, err = in.svc.Spreadsheets.Values.Append(in.id, quoted+"!A1", &sheetsapi.ValueRange{Values: [][]any{row}}).
		ValueInputOption("RAW").InsertDataOption("INSERT_ROWS").Context(ctx).Do()
	if err != nil {
		return fmt.Errorf("values.append: %w", err)
	}
	return nil
}

// failures returns the appends that failed so far.
func (in *inbox) failures() []error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]error(nil), in.errs...)
}

// WithBodyKeyFields returns tabs with the dead-letter tab's BodyKeyFields set to keys, so
// rows of a source that carries its key in the payload (contact-form: "id") are identified by
// it.
func WithBodyKeyFields(tabs []model.TabConfig, keys map[string]string) []model.TabConfig {
	out := append([]model.TabConfig(nil), tabs...)
	for i := range out {
		if out[i].Role == model.RoleDeadLetter {
			out[i].BodyKeyFields = keys
		}
	}
	return out
}
