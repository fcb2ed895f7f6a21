package tui

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	"github.com/triage-dev/triage/model"
)

// asRole is a session of triage serve as name with role a: its store (newReplayModel's)
// read-only for a viewer, as the hub's session store is.
func asRole(name string, a model.Access) modelOpt {
	return func(o *Options) {
		o.Access, o.User, o.Identity, o.Remote = a, name, name+" · "+string(a), true
		if st, ok := o.Store.(*memStore); ok && !a.CanWrite() {
			st.ro = true
			o.ReadOnlyWhy = name + " is a " + string(a)
		}
	}
}

var (
	vera = asRole("vera", model.AccessViewer)
	tom  = asRole("tom", model.AccessTriager)
	olga = asRole("olga", model.AccessOperator)
)

// offeredBindings is every binding the footer and the help offer where the model is.
func offeredBindings(m *Model) []key.Binding {
	bs := m.ShortHelp()
	groups, _ := m.tabs.help(m.c, m.detail)
	for _, g := range groups {
		bs = append(bs, g.bindings...)
	}
	return bs
}

// Over triage serve the footer and the help offer only what the role allows, in the table
// and in the detail view, on every tab: a viewer no change, a triager no replay, requeue or
// cancel; nobody E or ctrl+z (they would run on the shared host). An operator is offered
// replays.
func TestRoleFooterAndHelpOfferOnlyWhatTheRoleAllows(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  modelOpt
		max  model.Access
	}{{"viewer", vera, ""}, {"triager", tom, model.AccessTriager}, {"operator", olga, model.AccessOperator}} {
		t.Run(c.name, func(t *testing.T) {
			m, _ := newReplayModel(t, newFakeReplayer(), 100, 30, c.opt)
			k := m.c.keys
			for _, tab := range []string{"1", "2", "3"} {
				for _, view := range []string{"table", "detail"} {
					keys(m, "esc", tab)
					if view == "detail" {
						keys(m, "enter")
					}
					seen := map[string]bool{}
					for _, b := range offeredBindings(m) {
						if need := m.c.needs(b); !roleAllows(c.max, need) || c.max == "" && need != "" {
							t.Errorf("tab %s, %s: a %s is offered %q %q (needs a %s)", tab, view, c.name, b.Help().Key, b.Help().Desc, need)
						}
						if bindingIn(b, k.EditPayload, k.Suspend) {
							t.Errorf("tab %s, %s: %q is offered over triage serve", tab, view, b.Help().Key)
						}
						seen[b.Help().Desc] = true
					}
					if tab == "2" && view == "table" && (c.max == model.AccessOperator) != seen[k.ReplayAll.Help().Desc] {
						t.Errorf("a %s offered A: %v", c.name, seen[k.ReplayAll.Help().Desc])
					}
					if tab == "1" && view == "table" && (c.max != "") != seen["status"] {
						t.Errorf("a %s offered s: %v", c.name, seen["status"])
					}
				}
			}
		})
	}
}

// A key beyond the role says so in a whole sentence naming the role it needs, and does
// nothing: no plan, no dialog, no write.
func TestRoleRefusalsAreWholeSentences(t *testing.T) {
	cases := []struct {
		opt  modelOpt
		keys []string
		want string
	}{
		{tom, []string{"2", "R"}, "tom is a triager: only an operator can replay dead letters"},
		{tom, []string{"2", "A"}, "tom is a triager: only an operator can replay dead letters"},
		{tom, []string{"2", "enter", "R"}, "tom is a triager: only an operator can replay dead letters"},
		{tom, []string{"3", "Q"}, "tom is a triager: only an operator can requeue stale claims"},
		{vera, []string{"s"}, "vera is a viewer: only a triager or an operator can set a status"},
		{vera, []string{"u"}, "vera is a viewer: only a triager or an operator can undo a change"},
		{vera, []string{"2", "e"}, "vera is a viewer: only a triager or an operator can clear a sticky error"},
		{vera, []string{"2", "D"}, "vera is a viewer: only a triager or an operator can discard a dead letter"},
		{vera, []string{"2", "R"}, "vera is a viewer: only an operator can replay dead letters"},
		{vera, []string{"3", "Q"}, "vera is a viewer: only an operator can requeue stale claims"},
	}
	for _, c := range cases {
		fr := newFakeReplayer()
		m, st := newReplayModel(t, fr, 100, 30, c.opt)
		keys(m, c.keys...)
		if got := toastTexts(m); got != c.want {
			t.Errorf("%v: toast %q, want %q", c.keys, got, c.want)
		}
		if m.dialog != nil || len(fr.planned) != 0 || m.writes.writing || len(st.applied) != 0 {
			t.Errorf("%v did something: dialog %T, plans %v, writing %v", c.keys, m.dialog, fr.planned, m.writes.writing)
		}
	}
}

// A viewer watching another person's replay is not offered x; pressing it says, in a whole
// sentence, that only an operator can cancel it. An operator is offered x and asked first;
// one the replayer refuses (CancelRefusal) is not offered it either.
func TestWatchCancelFollowsTheRole(t *testing.T) {
	m, sr := newWatchModel(t, 100, 30, vera)
	sr.w.refusal = "vera is a viewer: only an operator can cancel another person's replay"
	openWatch(t, m)
	if out := plainScreen(m); strings.Contains(out, "cancel alice's run") || !strings.Contains(out, "back (it goes on)") {
		t.Errorf("a viewer's footer in alice's run:\n%s", out)
	}
	keys(m, "x")
	if got, want := toastTexts(m), "vera is a viewer: only an operator can cancel alice's replay of failed_calls"; !strings.Contains(got, want) {
		t.Errorf("x: %q, want %q", got, want)
	}
	if m.dialog != nil || sr.w.cancelled != "" {
		t.Errorf("a viewer's x asked or cancelled: %T %q", m.dialog, sr.w.cancelled)
	}
	keys(m, "?")
	if out := plainScreen(m); strings.Contains(out, "cancel") {
		t.Errorf("the help offers a viewer a cancel:\n%s", out)
	}

	m, _ = newWatchModel(t, 100, 30, olga)
	openWatch(t, m)
	if out := plainScreen(m); !strings.Contains(out, "x cancel alice's run (asks first)") {
		t.Errorf("an operator isn't offered x:\n%s", out)
	}
	keys(m, "x")
	if _, ok := m.dialog.(confirm); !ok {
		t.Errorf("an operator's x doesn't ask: %T", m.dialog)
	}

	m, sr = newWatchModel(t, 100, 30, olga)
	sr.w.refusal = "olga may not cancel runs here"
	openWatch(t, m)
	if out := plainScreen(m); strings.Contains(out, "cancel alice's run") {
		t.Errorf("x is offered although the replayer refuses it:\n%s", out)
	}
}

// The group view tells only an operator that A replays a group.
func TestGroupHintsFollowTheRole(t *testing.T) {
	for _, c := range []struct {
		name   string
		opt    modelOpt
		offers bool
	}{{"viewer", vera, false}, {"triager", tom, false}, {"operator", olga, true}} {
		m, _ := newReplayModel(t, newFakeReplayer(), 100, 30, c.opt)
		keys(m, "2", "c")
		if out := plainScreen(m); strings.Contains(out, "A replays") != c.offers {
			t.Errorf("%s: the group view offers A: %v\n%s", c.name, !c.offers, out)
		}
		keys(m, "enter")
		if got := toastTexts(m); !strings.Contains(got, "showing crm") || strings.Contains(got, "replays them") != c.offers {
			t.Errorf("%s: enter on a group says %q", c.name, got)
		}
	}
}

// A stale claim's detail says Q requeues it only to an operator.
func TestStaleClaimHintFollowsTheRole(t *testing.T) {
	for _, c := range []struct {
		name   string
		opt    modelOpt
		offers bool
	}{{"triager", tom, false}, {"operator", olga, true}} {
		m, _ := newReplayModel(t, newFakeReplayer(), 100, 30, c.opt)
		keys(m, "3")
		for cursorID(m) != "job-2" {
			keys(m, "j")
		}
		keys(m, "enter")
		out := plainScreen(m)
		if !strings.Contains(out, "stale: claimed") {
			t.Fatalf("job-2 is not stale:\n%s", out)
		}
		if strings.Contains(out, "Q requeues it") != c.offers {
			t.Errorf("%s: the detail offers Q: %v\n%s", c.name, !c.offers, out)
		}
	}
}
