package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
)

const broken = `spreadsheet = "1AbC"
refresh = "6o s"
colour = "blue"

[tabs.inbox]
name = "Inbox"
statuses = ["new", "read", "read"]
[tabs.inbox.columns]
id = "Submission ID"
bogus = "x"

[tabs.archive]
name = "Old"

[sources.crm]
preset = "stripe"
url_prefixes = ["https://crm.example.com/"]
timeout = "soon"
key = "cookie:x"

[sources.contact-form]
preset = "apps-script"
[sources.contact-form.headers]
Authorization = "env:CRM_TOKEN"
[sources.contact-form.outcomes]
"404" = "maybe"
`

func TestParseReportsEveryProblemWithItsLine(t *testing.T) {
	_, probs := Parse([]byte(broken))
	want := []struct {
		line int
		frag string
	}{
		{2, "refresh"},
		{3, `unknown key "colour"`},
		{7, "repeated"},
		{10, `no column "bogus"`},
		{12, `unknown tab role "archive"`},
		{16, `unknown preset "stripe"`},
		{18, `timeout "soon"`},
		{19, `key "cookie:x"`},
		{21, "contact-form has no url_prefixes"},
		{26, `outcome "maybe"`},
	}
	if len(probs) != len(want) {
		t.Errorf("got %d problems, want %d:\n%v", len(probs), len(want), probs)
	}
	for _, w := range want {
		found := false
		for _, p := range probs {
			if p.Line == w.line && strings.Contains(p.Msg, w.frag) {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem on line %d mentioning %q; got %v", w.line, w.frag, probs)
		}
	}
}

func TestSyntaxErrorHasLine(t *testing.T) {
	_, probs := Parse([]byte("spreadsheet = \"x\"\nrefresh = = 1\nname = 1\n"))
	if len(probs) != 1 || probs[0].Line != 2 {
		t.Fatalf("got %v", probs)
	}
}

func TestTypeErrorNamesKey(t *testing.T) {
	_, probs := Parse([]byte("spreadsheet = \"x\"\n\n[sources.crm]\nurl_prefixes = \"https://a/\"\n"))
	if !hasProblem(probs, 4, "url_prefixes", false) {
		t.Fatalf("got %v", probs)
	}
}

func TestGoodConfigToTabConfigs(t *testing.T) {
	c, probs := Parse([]byte(`
spreadsheet = "1AbC"
refresh = "30s"
[tabs.inbox]
name = "Contact"
statuses = ["New", "Done"]
[tabs.inbox.columns]
id = "Submission ID"
[tabs.queue]
stale_after = "45m"
[sources.contact-form]
preset = "apps-script"
url_prefixes = ["https://script.google.com/macros/s/"]
key = ["header:Idempotency-Key", "body:id"]
[keys]
quit = ["x"]
`))
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	tcs := c.TabConfigs()
	if len(tcs) != 3 || tcs[0].Name != "Contact" || tcs[0].Columns[model.FID] != "Submission ID" || tcs[0].Statuses[0] != "New" {
		t.Errorf("inbox %+v", tcs[0])
	}
	if tcs[1].Name != "failed_calls" || tcs[1].BodyKeyFields["contact-form"] != "id" {
		t.Errorf("deadletter %+v", tcs[1])
	}
	if tcs[2].StaleAfter != 45*time.Minute {
		t.Errorf("queue %+v", tcs[2])
	}
	if c.RefreshInterval() != 30*time.Second || c.Keys["quit"][0] != "x" {
		t.Errorf("refresh/keys")
	}
}

func TestLoadMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "none.toml")
	if c, err := Load(p, false); err != nil || c == nil {
		t.Fatalf("implicit missing file should be empty config: %v", err)
	}
	if _, err := Load(p, true); err == nil {
		t.Fatal("explicit missing file accepted")
	}
	os.WriteFile(p, []byte("refresh = 5\n"), 0o600)
	if _, err := Load(p, true); err == nil || !strings.Contains(err.Error(), p+":1") {
		t.Fatalf("want error naming %s:1, got %v", p, err)
	}
}

func TestSourceWithoutPrefixesIsAWarningNotAFailure(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.toml")
	os.WriteFile(p, []byte("spreadsheet = \"x\"\n[sources.crm]\npreset = \"rest\"\n"), 0o600)
	c, err := Load(p, true)
	if err != nil {
		t.Fatalf("a source without url_prefixes must not stop triage: %v", err)
	}
	if len(c.Warnings) != 1 || c.Warnings[0].Line != 2 || !strings.Contains(c.Warnings[0].Msg, "url_prefixes") {
		t.Errorf("warnings %v", c.Warnings)
	}
	probs, err := Check(p)
	if err != nil || len(probs) != 1 {
		t.Errorf("config check must still report it: %v %v", probs, err)
	}
}

func TestTypeErrorsDontHideOtherProblems(t *testing.T) {
	_, probs := Parse([]byte("spreadsheet = \"x\"\nreadonly = \"yes\"\nrefresh = \"soon\"\n[sources.crm]\nurl_prefixes = \"https://a/\"\nmax_attempts = \"two\"\n"))
	wantProblems(t, probs, false, lineProblem{2, "readonly"}, lineProblem{3, "refresh"}, lineProblem{5, "url_prefixes"}, lineProblem{6, "max_attempts"})
}

func TestTypeErrorsInMultiLineValuesAndQuotedTables(t *testing.T) {
	data := "[tabs.inbox]\nstatuses = [\n  \"new\",\n  2,\n]\nname = 3\n\n[sources.\"crm v2\"]\nurl_prefixes = [\"https://a/\"]\ntimeout = 5\npreset = \"nope\"\n"
	_, probs := Parse([]byte(data))
	wantProblems(t, probs, false, lineProblem{2, "statuses"}, lineProblem{6, "name"}, lineProblem{10, "timeout"}, lineProblem{11, "preset"})
}

// TestMarkReadOnOpen: mark_read_on_open reaches the inbox's tab config (off by default); a
// wrong type, another tab, or statuses without read are reported with their line.
func TestMarkReadOnOpen(t *testing.T) {
	inbox := func(c *Config) model.TabConfig {
		for _, tc := range c.TabConfigs() {
			if tc.Role == model.RoleInbox {
				return tc
			}
		}
		t.Fatal("no inbox tab config")
		return model.TabConfig{}
	}
	c, probs := Parse([]byte("[tabs.inbox]\nmark_read_on_open = true\n"))
	if len(probs) != 0 || !inbox(c).MarkReadOnOpen {
		t.Errorf("on: problems %v, MarkReadOnOpen %v", probs, inbox(c).MarkReadOnOpen)
	}
	c, probs = Parse([]byte("[tabs.inbox]\nname = \"Inbox\"\n"))
	if len(probs) != 0 || inbox(c).MarkReadOnOpen {
		t.Errorf("off by default: problems %v, MarkReadOnOpen %v", probs, inbox(c).MarkReadOnOpen)
	}
	for text, want := range map[string]struct {
		line int
		frag string
	}{
		"[tabs.inbox]\nname = \"Inbox\"\nmark_read_on_open = \"yes\"\n":            {3, "mark_read_on_open"},
		"refresh = \"60s\"\n[tabs.queue]\nmark_read_on_open = true\n":              {3, "only applies to the inbox"},
		"[tabs.inbox]\nstatuses = [\"new\", \"done\"]\nmark_read_on_open = true\n": {3, `"read", which statuses doesn't list`},
	} {
		c, probs := Parse([]byte(text))
		if len(probs) != 1 || probs[0].Line != want.line || !strings.Contains(probs[0].Msg, want.frag) {
			t.Errorf("%q: problems %v, want one on line %d about %q", text, probs, want.line, want.frag)
		}
		if inbox(c).MarkReadOnOpen && want.frag != `"read", which statuses doesn't list` {
			t.Errorf("%q: the option is on", text)
		}
	}
}

// A tab's saved views: a name and a filter each, in the config's order; a view without a
// name or a filter, two of one name, or one called "all" (the tab without a filter) is a
// problem on its line.
func TestTabViews(t *testing.T) {
	c, probs := Parse([]byte("[tabs.inbox]\n[[tabs.inbox.views]]\nname = \"urgent\"\nfilter = \"status:new urgent\"\n[[tabs.inbox.views]]\nname = \"waiting\"\nfilter = \"status:read\"\n"))
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	tc := c.TabConfigs()[0]
	if len(tc.Views) != 2 || tc.Views[0] != (model.View{Name: "urgent", Filter: "status:new urgent"}) || tc.Views[1].Name != "waiting" {
		t.Errorf("views %+v", tc.Views)
	}
	for _, bad := range []struct{ text, want string }{
		{"[[tabs.inbox.views]]\nfilter = \"x\"\n", "has no name"},
		{"[[tabs.inbox.views]]\nname = \"a\"\n", `view "a" has no filter`},
		{"[[tabs.inbox.views]]\nname = \"All\"\nfilter = \"x\"\n", `may not be called "All"`},
		{"[[tabs.inbox.views]]\nname = \"a\"\nfilter = \"x\"\n[[tabs.inbox.views]]\nname = \"A\"\nfilter = \"y\"\n", `two views are called "A"`},
	} {
		_, probs := Parse([]byte(bad.text))
		if len(probs) != 1 || !strings.Contains(probs[0].Msg, bad.want) || probs[0].Line == 0 {
			t.Errorf("%q: %v, want one problem with its line saying %q", bad.text, probs, bad.want)
		}
	}
}

// [tabs.ROLE] table lists the TUI's columns in order; an empty or repeated entry is a problem.
func TestTabTable(t *testing.T) {
	c, probs := Parse([]byte("[tabs.inbox]\ntable = [\"age\", \"Name\", \"message\", \"Phone\"]\n"))
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	if got := c.TabConfigs()[0].TableColumns; strings.Join(got, ",") != "age,Name,message,Phone" {
		t.Errorf("table %q", got)
	}
	_, probs = Parse([]byte("[tabs.inbox]\ntable = [\"age\", \"AGE\"]\n"))
	if len(probs) != 1 || !strings.Contains(probs[0].Msg, `repeated column "AGE"`) || probs[0].Line != 2 {
		t.Errorf("a repeated column: %v", probs)
	}
}
