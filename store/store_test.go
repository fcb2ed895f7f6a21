package store_test

import (
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/store"
)

// A tab is found by its exact name before one that differs only in case; an edit naming a tab
// that isn't configured stops the Apply before anything is sent, naming what is configured.
func TestApplyStartShared(t *testing.T) {
	tabs := []model.TabConfig{{Name: "inbox", Role: model.RoleInbox}, {Name: "Inbox", Role: model.RoleQueue}, {Name: "Jobs", Role: model.RoleQueue}}
	if tc, ok := store.FindTab(tabs, "Inbox"); !ok || tc.Role != model.RoleQueue {
		t.Errorf("exact name: %+v %v", tc, ok)
	}
	if tc, ok := store.FindTab(tabs, "JOBS"); !ok || tc.Name != "Jobs" {
		t.Errorf("case-insensitive: %+v %v", tc, ok)
	}
	if _, ok := store.FindTab(tabs, "failed_calls"); ok {
		t.Error("found a tab that isn't configured")
	}
	if got := store.TabNames(nil); got != "none" {
		t.Errorf("no tabs: %q", got)
	}
	for n, want := range map[int]string{0: "write 0 edits", 1: "write 1 edit", 3: "write 3 edits"} {
		if got := store.ApplyOp(n); got != want {
			t.Errorf("ApplyOp(%d) = %q", n, got)
		}
	}
	tcs, err := store.EditTabs("write 2 edits", tabs, []model.Edit{{Tab: "jobs"}, {Tab: "Inbox"}})
	if err != nil || len(tcs) != 2 || tcs[0].Name != "Jobs" || tcs[1].Name != "Inbox" {
		t.Fatalf("EditTabs: %+v %v", tcs, err)
	}
	_, err = store.EditTabs("write 1 edit", tabs, []model.Edit{{Tab: "gone"}})
	if err == nil || !strings.Contains(err.Error(), `write 1 edit: tab "gone" is not a configured tab (configured: "inbox", "Inbox", "Jobs"); nothing was written`) {
		t.Fatalf("unconfigured tab: %v", err)
	}
	if got := store.Actor(model.WithActor(t.Context(), "alice"), "own"); got != "alice" {
		t.Errorf("the context's person: %q", got)
	}
	if got := store.Actor(t.Context(), "own"); got != "own" {
		t.Errorf("the store's own: %q", got)
	}
}
