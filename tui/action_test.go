package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestEveryComponentHasTheOneUpdateShape reads the package's source: every Update but the
// root's (Model.Update, tea.Model's) is Update(msg tea.Msg) (T, action), T the component's
// own type (a value, or the pointer it is used by) or, for a dialog, the dialog interface.
// The root reads a component's wishes from that action alone, and carries them out in
// action.go (onAction, onEffect).
func TestEveryComponentHasTheOneUpdateShape(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	src := func(e ast.Expr) string {
		var b strings.Builder
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.StarExpr:
				b.WriteString("*")
			case *ast.SelectorExpr:
				b.WriteString(n.X.(*ast.Ident).Name + "." + n.Sel.Name)
				return false
			case *ast.Ident:
				b.WriteString(n.Name)
			}
			return true
		})
		return b.String()
	}
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Update" {
				continue
			}
			recv := src(fn.Recv.List[0].Type)
			if recv == "*Model" {
				continue
			}
			seen++
			var params, results []string
			for _, p := range fn.Type.Params.List {
				for range max(1, len(p.Names)) {
					params = append(params, src(p.Type))
				}
			}
			if fn.Type.Results != nil {
				for _, r := range fn.Type.Results.List {
					for range max(1, len(r.Names)) {
						results = append(results, src(r.Type))
					}
				}
			}
			ok = len(params) == 1 && params[0] == "tea.Msg" && len(results) == 2 && results[1] == "action" &&
				(results[0] == recv || results[0] == "dialog")
			if !ok {
				t.Errorf("%s: (%s).Update(%s) (%s), want Update(msg tea.Msg) (%s, action)",
					fset.Position(fn.Pos()), recv, strings.Join(params, ", "), strings.Join(results, ", "), recv)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("found %d components' Update, want every one of them (more than 10)", seen)
	}
}

// TestLineInputOnItsOwn: the line editor, without a prompt around it, edits with the
// KeyMap's input keys, types what isn't one of them, takes a paste, and has no action.
func TestLineInputOnItsOwn(t *testing.T) {
	k := DefaultKeyMap()
	in := newLineInput(&common{keys: &k})
	for _, msg := range []tea.Msg{press("a"), press("b"), press("c"), press("left"), press("backspace"), tea.PasteMsg{Content: "X\tY"}} {
		var a action
		in, a = in.Update(msg)
		if a != nil {
			t.Fatalf("Update(%v) = %v, want no action", msg, a)
		}
	}
	if got := in.Value(); got != "aX Yc" {
		t.Errorf("value %q, want %q", got, "aX Yc")
	}
	in, _ = in.Update(press("ctrl+a"))
	in, _ = in.Update(press("ctrl+k"))
	if got := in.Value(); got != "" {
		t.Errorf("ctrl+a, ctrl+k left %q", got)
	}
}

// TestHelpViewTakesOnlyKeys: the help scrolls and closes on keys; any other message leaves
// it as it is.
func TestHelpViewTakesOnlyKeys(t *testing.T) {
	k := DefaultKeyMap()
	h := helpView{c: &common{keys: &k, height: 24}, open: true}
	h, a := h.Update(press("j"))
	if a != nil || h.offset != 1 {
		t.Fatalf("j: offset %d, action %v; want 1, none", h.offset, a)
	}
	if h2, a := h.Update(tea.WindowSizeMsg{Width: 80, Height: 24}); a != nil || h2.offset != 1 || !h2.open {
		t.Errorf("a window size moved or closed the help: %+v, %v", h2, a)
	}
	if h, _ = h.Update(press("?")); h.open || h.offset != 0 {
		t.Errorf("? leaves the help open (%v) or scrolled (%d)", h.open, h.offset)
	}
}
