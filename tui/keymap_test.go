package tui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestKeyMapConflicts(t *testing.T) {
	if c := DefaultKeyMap().Conflicts(); c != nil {
		t.Fatalf("the default keys conflict: %v", c)
	}
	if err := DefaultKeyMap().Validate(); err != nil {
		t.Fatal(err)
	}
	km := DefaultKeyMap()
	if err := km.Rebind("replay", []string{"r"}); err != nil {
		t.Fatal(err)
	}
	if got := km.Conflicts(); !slices.Equal(got, []string{`key "r" is bound to both replay and refresh`}) {
		t.Errorf("Conflicts() = %q", got)
	}
	if err := km.Validate(); err == nil || !strings.Contains(err.Error(), `key "r" is bound to both replay and refresh`) {
		t.Errorf("Validate() = %v", err)
	}
	km = DefaultKeyMap()
	_ = km.Rebind("undo", []string{"u", "y"})
	_ = km.Rebind("discard", []string{"y"})
	_ = km.Rebind("refresh", []string{"ctrl+c", "f5"})
	_ = km.Rebind("cancel", []string{"x", "ctrl+c"}) // cancelling is what ctrl+c does during a run
	want := []string{
		`key "ctrl+c" is reserved (it always quits, or cancels a running replay): it can't be bound to refresh`,
		`key "y" is bound to discard, undo and copy`,
	}
	if got := km.Conflicts(); !slices.Equal(got, want) {
		t.Errorf("Conflicts() =\n%q\nwant\n%q", got, want)
	}
	// An unbound action conflicts with nothing.
	km = DefaultKeyMap()
	_ = km.Rebind("refresh", nil)
	_ = km.Rebind("replay", []string{"r"})
	if c := km.Conflicts(); c != nil {
		t.Errorf("refresh is unbound, r is free: %v", c)
	}
}

// The hints name the keys as bound, not the defaults.
func TestHintsFollowTheKeyMap(t *testing.T) {
	km := DefaultKeyMap()
	for action, keys := range map[string][]string{"clear": {"backspace"}, "quit": {"ctrl+q"}, "down": {"ctrl+n"}, "up": {"ctrl+p"}} {
		if err := km.Rebind(action, keys); err != nil {
			t.Fatal(err)
		}
	}
	if c := km.Conflicts(); c != nil {
		t.Fatal(c)
	}
	m := newLoaded(t, testWorkbook(t), 160, 30, func(o *Options) { o.KeyMap = km })
	keys(m, "enter")
	if out := plainScreen(m); !strings.Contains(out, "esc/backspace/ctrl+q back") || !strings.Contains(out, "ctrl+n/ctrl+p scroll") {
		t.Errorf("the detail's hints follow the keys:\n%s", out)
	}
	send(m, tea.KeyPressMsg{Code: 'q', Mod: tea.ModCtrl})
	if m.detail != nil {
		t.Error("ctrl+q (quit) goes back from the detail")
	}
	keys(m, "?")
	if out := plainScreen(m); !strings.Contains(out, "esc/backspace/? close help") || !strings.Contains(out, "ctrl+n/ctrl+p scroll") {
		t.Errorf("the help's hints follow the keys:\n%s", out)
	}
}

func TestKeyMapRebind(t *testing.T) {
	km := DefaultKeyMap()
	if err := km.Rebind("down", []string{"n", "ctrl+n"}); err != nil {
		t.Fatal(err)
	}
	err := km.Rebind("downn", []string{"x"})
	if err == nil || !strings.Contains(err.Error(), `"downn"`) || !strings.Contains(err.Error(), "half_down") {
		t.Errorf("unknown action error must name it and list valid ones: %v", err)
	}
	if err := km.Rebind("replay", nil); err != nil {
		t.Fatal(err)
	}
	if km.Replay.Enabled() {
		t.Error("an empty list unbinds")
	}
	for _, a := range []string{"up", "down", "top", "bottom", "half_down", "half_up", "page_down", "page_up", "next_tab", "prev_tab",
		"detail", "preview", "filter", "clear", "mark", "mark_all", "unmark_all", "set_status", "clear_error", "replay", "copy", "undo",
		"refresh", "help", "quit", "discard", "requeue_stale", "replay_all", "copy_link", "cancel"} {
		if !strings.Contains(","+strings.Join(km.Actions(), ",")+",", ","+a+",") {
			t.Errorf("Actions() lacks %q", a)
		}
	}
	m := newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) { o.KeyMap = km })
	keys(m, "j")
	if cursorID(m) != "msg-000" {
		t.Error("j no longer moves after rebinding down")
	}
	keys(m, "n")
	if cursorID(m) != "msg-001" {
		t.Error("n moves down after rebinding")
	}
	keys(m, "?")
	if !strings.Contains(plainScreen(m), "n/ctrl+n") {
		t.Errorf("help shows the new keys:\n%s", plainScreen(m))
	}
}
