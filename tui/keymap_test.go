package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
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
	km := reboundKeyMap(t, map[string][]string{"clear": {"backspace"}, "quit": {"ctrl+q"}, "down": {"ctrl+n"}, "up": {"ctrl+p"}})
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

// TestConfirmYesRebinds drives the TUI with confirm_yes (and confirm_no) rebound: the dialog
// names the new keys, the old y no longer goes ahead, the new key does.
func TestConfirmYesRebinds(t *testing.T) {
	km := reboundKeyMap(t, map[string][]string{"confirm_yes": {"o"}, "confirm_no": {"x"}})
	if err := km.Validate(); err != nil {
		t.Fatal(err)
	}
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.KeyMap = km })
	keys(m, "space", "space", "space", "s", "4")
	if _, ok := m.dialog.(confirm); !ok {
		t.Fatalf("no confirm:\n%s", plainScreen(m))
	}
	out := plainScreen(m)
	for _, want := range []string{"[o/x]", "o yes", "x no (esc)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the confirm lacks %q:\n%s", want, out)
		}
	}
	keys(m, "y")
	if _, ok := m.dialog.(confirm); !ok || m.writes.writing {
		t.Fatalf("y still says yes after confirm_yes = [\"o\"]:\n%s", plainScreen(m))
	}
	keys(m, "n") // no longer "no" either
	if _, ok := m.dialog.(confirm); !ok {
		t.Fatalf("n still says no after confirm_no = [\"x\"]:\n%s", plainScreen(m))
	}
	keys(m, "o")
	if m.dialog != nil || !m.writes.writing {
		t.Fatalf("o doesn't go ahead (dialog %T, writing %v):\n%s", m.dialog, m.writes.writing, plainScreen(m))
	}

	// x answers no; a rebinding that makes yes and no one key is refused.
	m = newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.KeyMap = km })
	keys(m, "space", "space", "s", "4", "x")
	if m.dialog != nil || m.writes.writing {
		t.Errorf("x doesn't answer no: %T %v", m.dialog, m.writes.writing)
	}
	_ = km.Rebind("confirm_no", []string{"o"})
	if err := km.Validate(); err == nil || !strings.Contains(err.Error(), `key "o" is bound to both confirm_yes and confirm_no`) {
		t.Errorf("confirm_yes and confirm_no on one key: Validate = %v", err)
	}
}

// TestDialogAndInputKeysRebind: the picker's, the group view's and the filter prompt's keys
// are bindings too.
func TestDialogAndInputKeysRebind(t *testing.T) {
	km := reboundKeyMap(t, map[string][]string{"picker_choose": {"ctrl+o"}, "back": {"ctrl+g"},
		"filter_keep": {"ctrl+o"}, "filter_cancel": {"ctrl+g"}, "input_delete_back": {"ctrl+x"}})
	if err := km.Validate(); err != nil {
		t.Fatal(err)
	}
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.KeyMap = km })
	keys(m, "s")
	if _, ok := m.dialog.(picker); !ok {
		t.Fatalf("no picker:\n%s", plainScreen(m))
	}
	if out := plainScreen(m); !strings.Contains(out, "ctrl+g cancel") {
		t.Errorf("the picker names the back key as bound:\n%s", out)
	}
	keys(m, "enter")
	if _, ok := m.dialog.(picker); !ok {
		t.Fatal("enter still chooses after picker_choose = [\"ctrl+o\"]")
	}
	keys(m, "esc") // esc still clears (clear is esc), so it still closes
	if m.dialog != nil {
		t.Fatal("esc (clear) no longer closes the picker")
	}

	keys(m, "/")
	typeText(m, "abc")
	keys(m, "backspace")
	if got := m.prompt.input.Value(); got != "abc" {
		t.Errorf("backspace still deletes after input_delete_back = [\"ctrl+x\"]: %q", got)
	}
	keys(m, "ctrl+x")
	if got := m.prompt.input.Value(); got != "ab" {
		t.Errorf("ctrl+x doesn't delete back: %q", got)
	}
	keys(m, "enter")
	if !m.prompt.open {
		t.Error("enter still keeps the filter after filter_keep = [\"ctrl+o\"]")
	}
	keys(m, "ctrl+o")
	if m.prompt.open || m.tabs.current().filter.query != "ab" {
		t.Errorf("ctrl+o doesn't keep the filter: filtering %v, query %q", m.prompt.open, m.tabs.current().filter.query)
	}
}

// TestEveryBindingIsInTheHelp: every action of the key map is listed by the `?` help (its
// keys and its description), so a binding added without a help entry fails here.
func TestEveryBindingIsInTheHelp(t *testing.T) {
	km := DefaultKeyMap()
	listed := map[string]bool{}
	// The table's help, and the detail view's (the pager's own keys are listed there).
	groups := km.fullHelp()
	for _, r := range []model.Role{model.RoleInbox, model.RoleDeadLetter, model.RoleQueue} {
		groups = append(groups, km.detailHelp(r)...)
	}
	for _, g := range groups {
		for _, b := range g.bindings {
			listed[b.Help().Key+"\x00"+b.Help().Desc] = true
		}
	}
	for _, a := range km.actions() {
		h := a.b.Help()
		if h.Key == "" || h.Desc == "" {
			t.Errorf("action %s has no help", a.name)
			continue
		}
		if !listed[h.Key+"\x00"+h.Desc] {
			t.Errorf("the help doesn't list %s (%s %s)", a.name, h.Key, h.Desc)
		}
	}
}

// TestNoKeyLiteralsOutsideTheKeyMap reads the package's source: outside keymap.go, no key is
// matched by its name (msg.String() == "enter", switch msg.String() { case "y": }, a key
// code compared), so every key the TUI answers is a KeyMap binding, rebindable and in the
// help. Typed text (msg.Text) is not a key.
func TestNoKeyLiteralsOutsideTheKeyMap(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	isKeyName := func(e ast.Expr) bool {
		call, ok := e.(*ast.CallExpr)
		if !ok || len(call.Args) != 0 {
			return false
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "String"
	}
	isKeyCode := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		return ok && (sel.Sel.Name == "Code" || strings.HasPrefix(sel.Sel.Name, "Key") && isTea(sel.X))
	}
	isStringLit := func(e ast.Expr) bool {
		lit, ok := e.(*ast.BasicLit)
		return ok && lit.Kind == token.STRING
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "keymap.go" {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				if (isKeyName(n.X) && isStringLit(n.Y)) || (isKeyName(n.Y) && isStringLit(n.X)) || isKeyCode(n.X) || isKeyCode(n.Y) {
					t.Errorf("%s: a key matched by name; bind it in the KeyMap and use key.Matches", fset.Position(n.Pos()))
				}
			case *ast.SwitchStmt:
				if n.Tag == nil || !(isKeyName(n.Tag) || isKeyCode(n.Tag)) {
					return true
				}
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						if isStringLit(e) || isKeyCode(e) {
							t.Errorf("%s: a key matched by name in a switch; bind it in the KeyMap and use key.Matches", fset.Position(e.Pos()))
						}
					}
				}
			}
			return true
		})
	}
}

// isTea reports whether e is the tea package's name (tea.KeyEnter).
func isTea(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "tea"
}
