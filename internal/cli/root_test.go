package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/spf13/cobra"
	"github.com/triage-dev/triage/internal/testbed"
)

// helpCommands is every command whose --help has a golden file (testdata/TestHelp/...).
var helpCommands = [][]string{
	{},
	{"demo"},
	{"emulator"},
	{"list"},
	{"set-status"},
	{"clear-error"},
	{"requeue-stale"},
	{"replay"},
	{"serve"},
	{"init"},
	{"migrate"},
	{"auth"},
	{"auth", "login"},
	{"auth", "status"},
	{"auth", "logout"},
	{"config"},
	{"config", "check"},
	{"version"},
	{"man"},
	{"completion"},
}

// TestHelp: every command's --help is on stdout, exit 0, nothing on stderr, and matches its
// golden file (go test ./internal/cli -run TestHelp -update to rewrite them).
func TestHelp(t *testing.T) {
	for _, args := range helpCommands {
		name := strings.Join(append([]string{"triage"}, args...), "_")
		t.Run(name, func(t *testing.T) {
			c := &cli{t: t, env: map[string]string{}}
			r := c.run(append(append([]string{}, args...), "--help")...)
			if r.code != exitOK || r.stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			golden.RequireEqual(t, r.stdout)
		})
	}
}

// TestHelpFitsTheWidth: help is wrapped to the terminal's width, or to 80 columns when
// piped: no line is longer, none ends in padding, one blank line at most between two blocks
// (none doubled after a title), and a description's paragraphs are wrapped once, greedily
// (each line ends where the next word would not fit: no orphan lines left by text
// hard-wrapped at another width and wrapped again).
func TestHelpFitsTheWidth(t *testing.T) {
	for _, width := range []int{0, 60, 80, 132} {
		want := width
		switch {
		case width == 0:
			want = helpPipedWidth
		case width > helpMaxWidth:
			want = helpMaxWidth
		}
		for _, args := range helpCommands {
			name := fmt.Sprintf("%s@%d", strings.Join(append([]string{"triage"}, args...), "_"), width)
			t.Run(name, func(t *testing.T) {
				c := &cli{t: t, env: map[string]string{}, width: width}
				r := c.run(append(append([]string{}, args...), "--help")...)
				if r.code != exitOK || r.stderr != "" {
					t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
				}
				lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
				desc := true // the description comes first, up to the first title
				for i, l := range lines {
					if w := ansi.StringWidth(l); w > want {
						t.Errorf("line %d is %d columns wide, over %d: %q", i+1, w, want, l)
					}
					if strings.TrimRight(l, " \t") != l {
						t.Errorf("line %d ends in spaces: %q", i+1, l)
					}
					if i > 0 && l == "" && lines[i-1] == "" {
						t.Errorf("two blank lines in a row at line %d", i+1)
					}
					if strings.HasPrefix(l, "  ") && strings.ToUpper(l) == l && strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "   ") {
						desc = false // a title: USAGE
					}
					if next := ""; desc && l != "" && i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
						next = strings.Fields(lines[i+1])[0]
						if ansi.StringWidth(l)+1+ansi.StringWidth(next) <= want {
							t.Errorf("line %d ends early: %q, then %q (an orphan line)", i+1, l, lines[i+1])
						}
					}
				}
			})
		}
	}
}

// TestEveryCommandIsDocumented: each of our commands says what it does, how it is called
// and shows an example, and validates its arguments.
func TestEveryCommandIsDocumented(t *testing.T) {
	root := newRootCmd(&globals{}, &env{getenv: func(string) string { return "" }})
	seen := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		seen++
		if c.Short == "" || c.Long == "" || c.Example == "" || c.Args == nil {
			t.Errorf("%s: Short, Long, Example and Args are all wanted", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if seen < 17 {
		t.Errorf("walked %d commands", seen)
	}
	covered := map[string]bool{}
	for _, args := range helpCommands {
		covered[strings.Join(args, " ")] = true
	}
	var check func(c *cobra.Command, path []string)
	check = func(c *cobra.Command, path []string) {
		if !covered[strings.Join(path, " ")] {
			t.Errorf("no --help golden for %q", strings.Join(path, " "))
		}
		for _, sub := range c.Commands() {
			check(sub, append(append([]string{}, path...), sub.Name()))
		}
	}
	check(root, nil)
}

// TestFlagsApply: a command lists only the global flags that apply to it.
func TestFlagsApply(t *testing.T) {
	c := &cli{t: t, env: map[string]string{}}
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"demo"}, []string{"--readonly", "--config"}, []string{"--spreadsheet", "--credentials", "--endpoint"}},
		{[]string{"emulator"}, []string{"--addr", "--workbook"}, []string{"--spreadsheet", "--credentials", "--readonly"}},
		{[]string{"list"}, []string{"--tab", "--status", "--filter", "--json", "--spreadsheet"}, []string{"--readonly", "--dry-run"}},
		{[]string{"config", "check"}, []string{"--config"}, []string{"--spreadsheet", "--readonly"}},
		{[]string{"auth", "logout"}, nil, []string{"--spreadsheet", "--port"}},
		{[]string{"set-status"}, []string{"--json", "--readonly"}, nil},
		{[]string{"clear-error"}, []string{"--json"}, nil},
		{[]string{"requeue-stale"}, []string{"--json", "--dry-run", "--older-than"}, nil},
		{[]string{"replay"}, []string{"--json", "--dry-run", "--concurrency", "--all"}, nil},
	} {
		r := c.run(append(tc.args, "--help")...)
		for _, f := range tc.want {
			if !listsFlag(r.stdout, f) {
				t.Errorf("%v --help lacks %s", tc.args, f)
			}
		}
		for _, f := range tc.not {
			if listsFlag(r.stdout, f) {
				t.Errorf("%v --help lists %s, which doesn't apply", tc.args, f)
			}
		}
	}
	if r := c.run("demo", "--spreadsheet", "x"); r.code != exitUsage || !strings.Contains(r.stderr, "unknown flag: --spreadsheet") {
		t.Errorf("demo --spreadsheet: %+v", r)
	}
}

// listsFlag reports whether help text lists the flag in its flags section.
func listsFlag(help, flag string) bool {
	return regexp.MustCompile(`(?m)^\s+(-\w )?` + regexp.QuoteMeta(flag) + `\s{2,}\S`).MatchString(help)
}

// TestVersionText: what `triage version` prints of a build, line by line (testdata/version.txtar
// runs the command itself).
func TestVersionText(t *testing.T) {
	got := buildInfo{Version: "v1.2.3", Revision: "0123456789abcdef", Time: "2026-11-30T10:00:00Z", Modified: true, GoVersion: "go1.26.8"}.String()
	for _, want := range []string{"triage v1.2.3", "commit:     0123456789abcdef (modified)", "date:       2026-11-30T10:00:00Z", "go:         go1.26.8"} {
		if !strings.Contains(got, want) {
			t.Errorf("version text lacks %q:\n%s", want, got)
		}
	}
}

// TestVersionWithoutVCS: a build that recorded no version, commit or date (VCS stamping off)
// says so instead of a bare "(devel)"; one that recorded a version but no commit says the
// commit and date were not recorded; values set at link time (-ldflags -X) win over what the
// toolchain recorded; and the README's release command sets this package's variables.
func TestVersionWithoutVCS(t *testing.T) {
	bare := buildInfoFrom(&debug.BuildInfo{Main: debug.Module{Path: "github.com/triage-dev/triage", Version: "(devel)"}}, "", "", "").String()
	if !strings.Contains(bare, "triage (devel)\nbuilt without version information") || strings.Contains(bare, "commit:") {
		t.Errorf("no VCS stamp:\n%s", bare)
	}
	if got := buildInfoFrom(nil, "", "", "").String(); !strings.Contains(got, "built without version information") {
		t.Errorf("no build info at all:\n%s", got)
	}
	tagged := buildInfoFrom(&debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "", "", "").String()
	for _, want := range []string{"triage v1.4.0\n", "commit:     not recorded", "date:       not recorded"} {
		if !strings.Contains(tagged, want) {
			t.Errorf("go install @v1.4.0 (no VCS): lacks %q:\n%s", want, tagged)
		}
	}
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "1111111111111111"}, {Key: "vcs.time", Value: "2026-01-01T00:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	rel := buildInfoFrom(stamped, "v2.0.0", "2222222222222222", "2026-12-01T10:00:00Z")
	if rel.Version != "v2.0.0" || rel.Revision != "2222222222222222" || rel.Time != "2026-12-01T10:00:00Z" || rel.Modified {
		t.Errorf("link-time values should win: %+v", rel)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := reflect.TypeOf(buildInfo{}).PkgPath()
	for _, want := range []string{"pkg=" + pkg + "\n", "-X $pkg.version=", "-X $pkg.commit=", "-X $pkg.date="} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README's release build lacks %q", want)
		}
	}
}

func TestCompletion(t *testing.T) {
	c := &cli{t: t, env: map[string]string{}}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		r := c.run("completion", sh)
		if r.code != exitOK || !strings.Contains(r.stdout, "triage") {
			t.Fatalf("completion %s: exit %d, stderr %q", sh, r.code, r.stderr)
		}
		if sh != "bash" {
			continue
		}
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Skip("no bash")
		}
		p := testbed.WriteFile(t, "triage.bash", r.stdout)
		if out, err := exec.Command(bash, "-n", p).CombinedOutput(); err != nil {
			t.Errorf("bash -n: %v\n%s", err, out)
		}
	}
}

// TestCompleteTab: the shell completion offers the tabs by name for --tab, each with what
// it holds (the defaults without a config).
func TestCompleteTab(t *testing.T) {
	c := &cli{t: t, env: map[string]string{}}
	r := c.run("__complete", "list", "--tab", "")
	if r.code != exitOK || !strings.Contains(r.stdout, "Inbox\tthe contact-form inbox") || !strings.Contains(r.stdout, "failed_calls\t") || !strings.Contains(r.stdout, "Jobs\t") {
		t.Errorf("%+v", r)
	}
}

func TestManPage(t *testing.T) {
	c := &cli{t: t, env: map[string]string{}}
	r := c.run("man")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{".TH TRIAGE 1", ".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS", ".SH COMMANDS", ".SH EXIT STATUS",
		`.SS "triage set\-status ID... [\-\-flags]"`, `.SS "triage requeue\-stale [\-\-flags]"`, `.SS "triage completion SHELL [\-\-flags]"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("man page lacks %q", want)
		}
	}
	lines := strings.Split(r.stdout, "\n")
	// The title line: .TH TITLE SECTION DATE SOURCE MANUAL. man centres MANUAL between two
	// "TRIAGE(1)" in the header: a long one (the command's whole summary) overlaps them.
	th := regexp.MustCompile(`^\.TH (\S+) (\d) "([^"]*)" "([^"]*)" "([^"]*)"$`).FindStringSubmatch(lines[0])
	if th == nil {
		t.Fatalf("the first line is not .TH with five arguments: %q", lines[0])
	}
	if manual := th[5]; len(manual) > 80-2*len("TRIAGE(1)")-10 || manual == "" {
		t.Errorf(".TH's manual name %q doesn't fit between the header's two TRIAGE(1) at 80 columns", manual)
	}
	// DESCRIPTION: each paragraph of the root's description is one paragraph (.PP and one
	// text line, which roff fills), not one per source line: a sentence is never cut in two.
	var desc []string
	for i := slices.Index(lines, ".SH DESCRIPTION") + 1; i < len(lines) && !strings.HasPrefix(lines[i], ".SH"); i++ {
		desc = append(desc, lines[i])
	}
	want := len(regexp.MustCompile(`\n\s*\n`).Split(strings.TrimSpace(newRootCmd(&globals{}, &env{}).Long), -1))
	if len(desc) != 2*want {
		t.Errorf("DESCRIPTION should be %d paragraphs, each .PP and one line:\n%s", want, strings.Join(desc, "\n"))
	}
	for i, l := range desc {
		if (i%2 == 0) != (l == ".PP") {
			t.Errorf("DESCRIPTION line %d: %q (want .PP, then a paragraph's one line)", i+1, l)
		}
		if i%2 == 1 && !strings.HasSuffix(l, ".") {
			t.Errorf("DESCRIPTION paragraph %q ends mid-sentence", l)
		}
	}
	for i := 1; i < len(lines); i++ {
		if lines[i-1] == ".PP" && (lines[i] == ".PP" || strings.HasPrefix(lines[i], ".SH") || strings.HasPrefix(lines[i], ".SS")) {
			t.Errorf("line %d: an empty paragraph", i)
		}
	}
	if man, err := exec.LookPath("man"); err == nil {
		p := testbed.WriteFile(t, "triage.1", r.stdout)
		cmd := exec.Command(man, "-l", p)
		cmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80")
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "triage") {
			t.Errorf("man -l: %v\n%s", err, out)
		}
	}
}

// TestCLIUsageErrors: every bad invocation is exit 2 with a message on stderr that names
// what is wrong (and the allowed values), nothing on stdout, and no request sent.
func TestCLIUsageErrors(t *testing.T) {
	_, url := startEmu(t, smallWorkbook())
	c := newCLI(t, url)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate"`}},
		{[]string{"--nope"}, []string{"unknown flag: --nope", "triage --help"}},
		{[]string{"list", "--tab", "Inbox", "new"}, []string{"takes no arguments", `"new"`}},
		{[]string{"--spreadsheet", "s1", "list", "--tab", "Inbox", "--status", "bogus"}, []string{`"bogus"`, "new, read, replied, done, spam"}},
		{[]string{"list", "--bogus"}, []string{"unknown flag: --bogus", "triage list --help"}},
		{[]string{"set-status", "--tab", "Inbox", "--status", "done"}, []string{"at least 1 row ID"}},
		{[]string{"clear-error", "--tab", "Jobs"}, []string{"at least 1 row ID"}},
		{[]string{"requeue-stale", "extra"}, []string{"takes no arguments"}},
		{[]string{"requeue-stale", "--older-than", "0s"}, []string{"positive duration"}},
		{[]string{"replay", "--all", "--concurrency", "0"}, []string{"--concurrency 0", "from 1 to 20"}},
		{[]string{"replay", "--all", "--concurrency", "21"}, []string{"--concurrency 21", "from 1 to 20"}},
		{[]string{"replay", "--all", "--concurrency", "-3"}, []string{"--concurrency -3", "from 1 to 20"}},
		{[]string{"replay", "--all", "--concurrency", "x"}, []string{"--concurrency", "invalid"}},
		{[]string{"replay", "--all", "id1"}, []string{"--all or row IDs, not both"}},
		{[]string{"replay"}, []string{"nothing selected"}},
		{[]string{"--spreadsheet", "s1", "replay", "--tab", "Inbox", "--all"}, []string{`"Inbox" is an inbox tab`}},
		{[]string{"init", "extra"}, []string{"takes no arguments"}},
		{[]string{"demo", "extra"}, []string{"takes no arguments"}},
		{[]string{"demo", "--spreadsheet", "s1"}, []string{"unknown flag: --spreadsheet"}},
		{[]string{"auth"}, []string{"login, status, logout"}},
		{[]string{"auth", "status", "--port", "8085"}, []string{"unknown flag: --port"}},
		{[]string{"config"}, []string{"check"}},
		{[]string{"config", "check", "extra"}, []string{"takes no arguments"}},
		{[]string{"version", "extra"}, []string{"takes no arguments"}},
		{[]string{"completion", "tcsh"}, []string{`unknown shell "tcsh"`, "bash, zsh, fish or powershell"}},
		{[]string{"completion"}, []string{"name a shell", "bash, zsh, fish or powershell"}},
		{[]string{"completion", "bash", "zsh"}, []string{"want one shell"}},
	} {
		r := c.run(tc.args...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q; want exit 2 and no stdout", tc.args, r.code, r.stdout)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, r.stderr, w)
			}
		}
		if strings.Count(r.stderr, "triage:") != 1 {
			t.Errorf("%v: the error should be printed once: %q", tc.args, r.stderr)
		}
		// The message follows "triage: ": it names a subcommand without the program again.
		if strings.Contains(r.stderr, "triage: triage ") {
			t.Errorf("%v: the program is named twice: %q", tc.args, r.stderr)
		}
	}
}
