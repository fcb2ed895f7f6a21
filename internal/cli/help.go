package cli

import (
	"cmp"
	"io"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/fang/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Help is drawn here, in fang's layout and ANSI palette (what, USAGE, EXAMPLES, COMMANDS,
// FLAGS), but to the width of the terminal it goes to: fang v2 wraps to stdout's width capped
// at 120, or to 120 when piped, pads every line of the description with spaces to that width,
// doesn't wrap flag descriptions, and re-wraps the descriptions, which are written as
// paragraphs hard-wrapped near 90 columns, into orphan lines on an 80-column terminal.
//
// Here a description's lines are joined into paragraphs (a blank line separates two) and
// wrapped to the width; flag and command descriptions wrap under themselves; an example too
// long for the width is continued with a backslash (a comment after it goes above it); no
// line is padded; one blank line follows each title. Colour only on a terminal that has it
// (colorprofile: NO_COLOR, TERM=dumb, a pipe all mean none).

const (
	// helpPipedWidth is the width of help written to a pipe or a file, or to a terminal whose
	// width can't be read.
	helpPipedWidth = 80
	// helpMaxWidth bounds help on a wide terminal: longer lines are hard to read.
	helpMaxWidth = 120
	// helpMinWidth is the narrowest help is wrapped to, whatever the terminal says.
	helpMinWidth = 30
)

// helpWidth is the width help is wrapped to on out: the terminal's (at most helpMaxWidth),
// else helpPipedWidth.
func helpWidth(e *env, out io.Writer) int {
	w := e.widthOf(out)
	if w <= 0 {
		return helpPipedWidth
	}
	return max(min(w, helpMaxWidth), helpMinWidth)
}

// helpStyles colour the parts of help that aren't prose; the zero value draws none.
type helpStyles struct {
	title, program, command, flag, comment lipgloss.Style
}

func newHelpStyles() helpStyles {
	cs := fang.AnsiColorScheme(lipgloss.LightDark(true))
	return helpStyles{
		title:   lipgloss.NewStyle().Bold(true).Foreground(cs.Title),
		program: lipgloss.NewStyle().Bold(true),
		command: lipgloss.NewStyle().Foreground(cs.Command),
		flag:    lipgloss.NewStyle().Foreground(cs.Flag),
		comment: lipgloss.NewStyle().Faint(true),
	}
}

// newHelpFunc returns the help function of every command: it writes the command's help to
// out, wrapped to its width, in colour where out is a terminal that has colour.
func newHelpFunc(e *env, out io.Writer) func(*cobra.Command, []string) {
	return func(c *cobra.Command, _ []string) {
		width := helpWidth(e, out)
		w := &colorprofile.Writer{Forward: out, Profile: colorprofile.Detect(out, e.vars().colorEnv)}
		st := helpStyles{}
		if w.Profile > colorprofile.Ascii {
			st = newHelpStyles()
		}
		_, _ = io.WriteString(w, renderHelp(c, width, st))
	}
}

// renderHelp is a command's help, wrapped to width columns.
func renderHelp(c *cobra.Command, width int, st helpStyles) string {
	var lines []string
	add := func(l ...string) { lines = append(lines, l...) }
	indent := func(n int, ls []string) []string {
		pad := strings.Repeat(" ", n)
		out := make([]string, len(ls))
		for i, l := range ls {
			if l != "" {
				out[i] = pad + l
			}
		}
		return out
	}
	section := func(title string, body []string) {
		if len(body) == 0 {
			return
		}
		add("", "  "+st.title.Render(strings.ToUpper(title)), "")
		add(body...)
	}

	add("")
	for i, p := range paragraphs(cmp.Or(c.Long, c.Short)) {
		if i > 0 {
			add("")
		}
		add(indent(2, wrapWords(p, width-2))...)
	}
	section("usage", indent(4, wrapCode(usageLine(c, true, st), width-4)))
	section("examples", indent(4, exampleLines(c.Example, width-4, st)))

	cmds, flags := commandRows(c, st), flagRows(c, st)
	keyW := 0
	for _, r := range append(append([]helpRow{}, cmds...), flags...) {
		keyW = max(keyW, ansi.StringWidth(r.key))
	}
	section("commands", twoColumns(cmds, keyW, width))
	section("flags", twoColumns(flags, keyW, width))
	add("")
	return strings.Join(lines, "\n") + "\n"
}

var blankLine = regexp.MustCompile(`\n[ \t]*\n`)

// paragraphs splits a description into paragraphs at blank lines and joins each one's lines
// (they are hard-wrapped in the source) with single spaces.
func paragraphs(text string) []string {
	var out []string
	for _, block := range blankLine.Split(strings.TrimSpace(text), -1) {
		if p := strings.Join(strings.Fields(block), " "); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// wrapWords breaks text into lines of at most width columns, at spaces; a word longer than
// width is cut, so no line runs past the edge.
func wrapWords(text string, width int) []string {
	width = max(width, 1)
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		for ansi.StringWidth(word) > width {
			if line != "" {
				lines, line = append(lines, line), ""
			}
			head := ansi.Truncate(word, width, "")
			lines, word = append(lines, head), word[len(head):]
		}
		switch {
		case line == "":
			line = word
		case ansi.StringWidth(line)+1+ansi.StringWidth(word) <= width:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// wrapCode breaks a shell command line that is wider than width at spaces, ending each line
// but the last with " \" and indenting the lines after the first by two, so that what is
// shown still runs as it reads. The line may carry colour.
func wrapCode(line string, width int) []string {
	if ansi.StringWidth(line) <= width {
		return []string{line}
	}
	var out, cur []string
	curW := 0
	for _, word := range strings.Split(line, " ") {
		ww := ansi.StringWidth(word)
		limit := width - 2 // room for " \"
		if len(out) > 0 {
			limit -= 2
		}
		switch {
		case len(cur) == 0:
			cur, curW = []string{word}, ww
		case curW+1+ww <= limit:
			cur, curW = append(cur, word), curW+1+ww
		default:
			// A flag goes on with its value ("--port 8085"), if it isn't alone on its line.
			var next []string
			if last := ansi.Strip(cur[len(cur)-1]); len(cur) > 1 && strings.HasPrefix(last, "-") && !strings.HasPrefix(ansi.Strip(word), "-") {
				cur, next = cur[:len(cur)-1], cur[len(cur)-1:]
			}
			out = append(out, strings.Join(cur, " ")+" \\")
			cur = append(next, word)
			curW = ansi.StringWidth(strings.Join(cur, " "))
		}
	}
	out = append(out, strings.Join(cur, " "))
	for i := 1; i < len(out); i++ {
		out[i] = "  " + out[i]
	}
	return out
}

// exampleLines lays out a command's examples: each as written (the source's common indent
// removed), a long one continued over lines (wrapCode), with a trailing comment ("  # ...")
// kept after it when it fits, else put on the line above.
func exampleLines(example string, width int, st helpStyles) []string {
	raw := strings.Split(strings.Trim(example, "\n"), "\n")
	common := -1
	for _, l := range raw {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if common < 0 || n < common {
			common = n
		}
	}
	var out []string
	for _, l := range raw {
		l = strings.TrimRight(l, " ")
		if len(l) >= common && common > 0 {
			l = l[common:]
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		code, comment := l, ""
		if i := strings.Index(l, "  # "); i >= 0 {
			code, comment = strings.TrimRight(l[:i], " "), strings.TrimSpace(l[i:])
		} else if strings.HasPrefix(l, "# ") {
			code, comment = "", l
		}
		styled := styleExample(code, st)
		if comment != "" && code != "" {
			// After the command, aligned as written, else two spaces after it.
			gap := l[len(code) : len(l)-len(comment)]
			if ansi.StringWidth(code+gap+comment) > width {
				gap = "  "
			}
			if ansi.StringWidth(code+gap+comment) <= width {
				out = append(out, styled+gap+st.comment.Render(comment))
				continue
			}
		}
		if comment != "" {
			for _, c := range wrapWords(strings.TrimPrefix(comment, "# "), width-2) {
				out = append(out, st.comment.Render("# "+c))
			}
		}
		if code != "" {
			out = append(out, wrapCode(styled, width)...)
		}
	}
	return out
}

// styleExample colours an example's program name and flags.
func styleExample(code string, st helpStyles) string {
	words := strings.Split(code, " ")
	for i, w := range words {
		switch {
		case w == "triage":
			words[i] = st.program.Render(w)
		case strings.HasPrefix(w, "-") && len(w) > 1:
			words[i] = st.flag.Render(w)
		}
	}
	return strings.Join(words, " ")
}

// usageLine is how a command is called: "triage set-status ID... [--flags]" (full), or
// "set-status ID... [--flags]" as its parent's list shows it. [command] when it has
// subcommands, [--flags] when it has flags other than --help.
func usageLine(c *cobra.Command, full bool, st helpStyles) string {
	use := strings.TrimSpace(strings.NewReplacer("[flags]", "", "[--flags]", "", "[command]", "").Replace(c.Use))
	_, rest, _ := strings.Cut(use, " ")
	var parts []string
	if full {
		parts = append(parts, st.program.Render(c.Root().Name()))
		if c.HasParent() {
			for _, name := range strings.Fields(strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")) {
				parts = append(parts, st.command.Render(name))
			}
		}
	} else {
		parts = append(parts, st.command.Render(c.Name()))
	}
	if rest = strings.Join(strings.Fields(rest), " "); rest != "" {
		parts = append(parts, rest)
	}
	if c.HasAvailableSubCommands() || strings.Contains(c.Use, "[command]") {
		parts = append(parts, "[command]")
	}
	if hasOwnFlags(c) {
		parts = append(parts, "["+st.flag.Render("--flags")+"]")
	}
	return strings.Join(parts, " ")
}

// hasOwnFlags reports whether c has a visible flag other than --help.
func hasOwnFlags(c *cobra.Command) bool {
	found := false
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			found = true
		}
	})
	return found
}

// helpRow is one line of a two-column section: a command or a flag, and what it does.
type helpRow struct {
	key  string // may carry colour
	text string
}

func commandRows(c *cobra.Command, st helpStyles) []helpRow {
	var rows []helpRow
	for _, sc := range c.Commands() {
		// cobra's help command is not "available" (IsAvailableCommand), but it is there to use.
		if sc.Hidden || sc.Deprecated != "" || !sc.IsAvailableCommand() && sc.Name() != "help" {
			continue
		}
		rows = append(rows, helpRow{key: usageLine(sc, false, st), text: sentence(sc.Short)})
	}
	return rows
}

func flagRows(c *cobra.Command, st helpStyles) []helpRow {
	var rows []helpRow
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		key := "--" + f.Name
		if f.Shorthand != "" {
			key = "-" + f.Shorthand + " " + key
		}
		text := sentence(f.Usage)
		switch f.DefValue {
		case "", "false", "0", "0s", "[]":
		default:
			text += " (default " + f.DefValue + ")"
		}
		rows = append(rows, helpRow{key: st.flag.Render(key), text: text})
	})
	return rows
}

// sentence starts a description with a capital letter ("config file" → "Config file"),
// leaving the rest as written ("JSON", "client_secret.json").
func sentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[size:]
}

// twoColumns lays out rows as keys (indented 4) and their texts in a column keyW+2 to the
// right, each text wrapped under itself. On a terminal too narrow for a readable second
// column, each text goes under its key, indented 8.
func twoColumns(rows []helpRow, keyW, width int) []string {
	if len(rows) == 0 {
		return nil
	}
	col := 4 + keyW + 2
	var out []string
	if width-col < 24 {
		for _, r := range rows {
			out = append(out, "    "+r.key)
			for _, l := range wrapWords(r.text, width-8) {
				out = append(out, "        "+l)
			}
		}
		return out
	}
	for _, r := range rows {
		text := wrapWords(r.text, width-col)
		if len(text) == 0 {
			text = []string{""}
		}
		pad := strings.Repeat(" ", col-4-ansi.StringWidth(r.key))
		out = append(out, strings.TrimRight("    "+r.key+pad+text[0], " "))
		for _, l := range text[1:] {
			out = append(out, strings.Repeat(" ", col)+l)
		}
	}
	return out
}
