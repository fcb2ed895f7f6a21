// The reply composer: over `triage serve` a reply is written in the TUI itself (an editor run
// there would be a program on the shared host, as its service account, with a shell a key
// away), in a text area over the body. ctrl+s ends it: the same question and send as after
// the editor (replymail.go); esc leaves it, the draft kept for `m` to open again.

package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
)

// composer is the reply being written in the TUI.
type composer struct {
	c     *common
	reply replyMail
	ta    textarea.Model
}

// composeDoneAction: the person ended the reply (ctrl+s): check it and ask to send it.
type composeDoneAction struct{ reply replyMail }

// composeLeaveAction: the person left the composer: the draft is kept.
type composeLeaveAction struct{ reply replyMail }

func (composeDoneAction) isAction()  {}
func (composeLeaveAction) isAction() {}

// newComposer opens the composer on the reply's text, the cursor where the reply is written:
// the first line of the message, after the headers and the blank line below them (above the
// quote).
func newComposer(c *common, rm replyMail, w, h int) *composer {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = ""
	ta.CharLimit = 0
	ta.MaxHeight = 0
	// Its ctrl+v reads the clipboard of the machine triage runs on (running xclip or the like
	// there): over serve, the shared host's. The terminal's own paste (bracketed) still works.
	ta.KeyMap.Paste.SetEnabled(false)
	ta.SetWidth(max(10, w-2))
	ta.SetHeight(max(3, h-2))
	ta.SetValue(rm.edited)
	ta.MoveToBegin()
	for range bodyLine(rm.edited) {
		ta.CursorDown()
	}
	ta.CursorStart()
	ta.Focus()
	return &composer{c: c, reply: rm, ta: ta}
}

// bodyLine is the index of a draft's first body line: the one after the blank line that ends
// its headers (0 when it has none).
func bodyLine(draft string) int {
	for i, l := range strings.Split(strings.ReplaceAll(draft, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			return i + 1
		}
	}
	return 0
}

// Update edits the text; ctrl+s ends it, esc leaves it.
func (cp *composer) Update(msg tea.Msg) (*composer, action) {
	k := cp.c.keys
	if km, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(km, k.ComposeSend):
			cp.reply.edited = cp.ta.Value()
			return cp, composeDoneAction{cp.reply}
		case key.Matches(km, k.Back):
			cp.reply.edited = cp.ta.Value()
			return cp, composeLeaveAction{cp.reply}
		}
	}
	var cmd tea.Cmd
	cp.ta, cmd = cp.ta.Update(msg)
	if cmd != nil {
		return cp, cmdAction{cmd}
	}
	return cp, nil
}

// setSize fits the text area to the body.
func (cp *composer) setSize(w, h int) {
	cp.ta.SetWidth(max(10, w-2))
	cp.ta.SetHeight(max(3, h-2))
}

// View is the title line, the text area and the keys.
func (cp *composer) View(w int) string {
	st := cp.c.styles
	title := st.paint(st.Section, " Reply · "+firstKey(cp.c.keys.ComposeSend)+" ends it (then you are asked to send) · "+firstKey(cp.c.keys.Back)+" leaves it, the draft kept")
	return fitStyled(title, w) + "\n" + cp.ta.View()
}
