package replay_test

import (
	"reflect"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
)

// selectTable is a dead-letter tab of two sources with a waiting, a rejected and a discarded
// row.
func selectTable(t *testing.T) *model.Table {
	return newMemStore(dlConfig, []row{
		{source: "crm", url: "https://crm.example/a", payload: `{"n":1}`, key: "k1"},
		{source: " billing ", url: "https://billing.example/a", payload: `{"n":2}`, key: "k2"},
		{source: "crm", url: "https://crm.example/a", payload: `{"n":3}`, key: "k3", status: "rejected"},
		{source: "crm", url: "https://crm.example/a", payload: `{"n":4}`, key: "k4", status: "discarded"},
	}).table(t)
}

func ids(recs []*model.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out
}

func TestSelectAll(t *testing.T) {
	tab := selectTable(t)
	sel := replay.Select(tab, nil, true, "")
	if got := ids(sel.Records); !reflect.DeepEqual(got, []string{"k1", "k2", "k3", "k4"}) || sel.Named || sel.Selected() != 4 {
		t.Fatalf("--all: %v named=%v selected=%d", got, sel.Named, sel.Selected())
	}
	// --source matches the trimmed cell; --all never reports unknown or excluded rows.
	sel = replay.Select(tab, nil, true, "billing")
	if got := ids(sel.Records); !reflect.DeepEqual(got, []string{"k2"}) || sel.Unknown != nil || sel.Excluded != nil {
		t.Fatalf("--all --source billing: %+v", sel)
	}
}

func TestSelectByID(t *testing.T) {
	tab := selectTable(t)
	sel := replay.Select(tab, []string{" k3", "nope", "k1", "k3 ", "k2"}, false, "crm")
	if got := ids(sel.Records); !reflect.DeepEqual(got, []string{"k3", "k1"}) {
		t.Errorf("records %v, want [k3 k1] (the order given, each once)", got)
	}
	if !reflect.DeepEqual(sel.Unknown, []string{"nope"}) {
		t.Errorf("unknown %v", sel.Unknown)
	}
	want := []model.Refusal{{ID: "k2", Row: 3, Reason: `row 3: its source is "billing", not "crm"; not sent`}}
	if !reflect.DeepEqual(sel.Excluded, want) {
		t.Errorf("excluded %+v, want %+v", sel.Excluded, want)
	}
	if !sel.Named || sel.Selected() != 4 {
		t.Errorf("named=%v selected=%d, want true 4", sel.Named, sel.Selected())
	}
}

func TestTabHasSource(t *testing.T) {
	tab := selectTable(t)
	for src, want := range map[string]bool{"crm": true, "billing": true, " billing ": false, "warehouse": false} {
		if got := replay.TabHasSource(tab, src); got != want {
			t.Errorf("TabHasSource(%q) = %v, want %v", src, got, want)
		}
	}
}

// TestSelectionExitCode is DESIGN §7's exit policy: the summary's code, raised to 1 by an
// unknown or excluded ID or a rejected or discarded row named by ID; never for --all's skips.
func TestSelectionExitCode(t *testing.T) {
	tab := selectTable(t)
	skipped := func(ids ...string) model.ReplaySummary {
		var s model.ReplaySummary
		for _, id := range ids {
			s.Refused = append(s.Refused, model.Refusal{ID: id, Skipped: true})
		}
		return s
	}
	halted := model.ReplaySummary{Halted: &model.Halt{Cause: "systemic"}}
	notDone := model.ReplaySummary{NotAttempted: []string{"k1"}}
	for _, c := range []struct {
		name  string
		sel   replay.Selection
		sum   model.ReplaySummary
		want  int
		stuck []string
	}{
		{"all clean", replay.Select(tab, nil, true, ""), skipped("k3", "k4"), replay.ExitDone, nil},
		{"named clean", replay.Select(tab, []string{"k1"}, false, ""), model.ReplaySummary{}, replay.ExitDone, nil},
		{"named rejected and discarded", replay.Select(tab, []string{"k3", "k4"}, false, ""), skipped("k3", "k4"), replay.ExitNotDone, []string{"k3", "k4"}},
		{"unknown", replay.Select(tab, []string{"k1", "nope"}, false, ""), model.ReplaySummary{}, replay.ExitNotDone, nil},
		{"excluded", replay.Select(tab, []string{"k2"}, false, "crm"), model.ReplaySummary{}, replay.ExitNotDone, nil},
		{"summary not done", replay.Select(tab, nil, true, ""), notDone, replay.ExitNotDone, nil},
		{"halted", replay.Select(tab, []string{"nope"}, false, ""), halted, replay.ExitHalted, nil},
	} {
		if got := c.sel.ExitCode(tab, c.sum); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
		if got := c.sel.Stuck(tab, c.sum); !reflect.DeepEqual(got, c.stuck) {
			t.Errorf("%s: stuck %v, want %v", c.name, got, c.stuck)
		}
	}
}

func TestExitAfterReport(t *testing.T) {
	for _, c := range []struct{ code, want int }{{replay.ExitDone, replay.ExitNotDone}, {replay.ExitNotDone, replay.ExitNotDone}, {replay.ExitHalted, replay.ExitHalted}} {
		if got := replay.ExitAfterReport(c.code, false); got != c.want {
			t.Errorf("ExitAfterReport(%d, false) = %d, want %d", c.code, got, c.want)
		}
		if got := replay.ExitAfterReport(c.code, true); got != c.code {
			t.Errorf("ExitAfterReport(%d, true) = %d", c.code, got)
		}
	}
}
