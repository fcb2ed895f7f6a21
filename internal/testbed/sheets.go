package testbed

import (
	"context"
	"net/http/httptest"
	"testing"

	"google.golang.org/api/option"
	sheetsapi "google.golang.org/api/sheets/v4"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// Sheets is the Sheets emulator behind a real HTTP server and the real sheets/v4 client
// over it: what every test of the store, the replay write-back, the TUI and serve talks to.
type Sheets struct {
	Emu     *emulator.Emulator
	Server  *httptest.Server
	Service *sheetsapi.Service
}

// NewSheets starts an emulator holding wbs, serves it until the test ends, and dials it
// without credentials.
func NewSheets(t testing.TB, wbs ...*emulator.Workbook) *Sheets {
	t.Helper()
	emu := emulator.New()
	for _, wb := range wbs {
		emu.AddWorkbook(wb)
	}
	srv := Serve(t, emu)
	svc, err := sheetsapi.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatalf("sheets service: %v", err)
	}
	return &Sheets{Emu: emu, Server: srv, Service: svc}
}

// Store is a sheets.Store over the emulator; with no Tabs in opts it reads every role's tab
// under its default configuration (AllTabs).
func (s *Sheets) Store(opts sheets.Options) *sheets.Store {
	if opts.Tabs == nil {
		opts.Tabs = AllTabs()
	}
	return sheets.New(context.Background(), s.Service, opts)
}

// AllTabs is every role's tab under its default configuration.
func AllTabs() []model.TabConfig {
	var tabs []model.TabConfig
	for _, r := range model.Roles {
		tabs = append(tabs, model.DefaultTabConfig(r))
	}
	return tabs
}
