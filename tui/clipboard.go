package tui

import (
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/model"
)

// Copying works through OSC 52, the one clipboard that reaches the user's machine over SSH
// from a jump host. How the sequence must be sent depends on what sits between us and the
// terminal (tea.EnvMsg tells us):
//
//   - plain terminals (xterm, kitty, iTerm2, Windows Terminal...): OSC 52 as is;
//   - tmux: OSC 52 as is (tmux takes it with `set-clipboard on`) and once more wrapped in
//     tmux's passthrough (for `allow-passthrough on`); setting the clipboard twice to the same
//     text is harmless, and either setting makes it work;
//   - GNU screen: wrapped in screen's DCS passthrough, in chunks screen accepts;
//   - TERM=dumb: as is; a terminal that doesn't know it ignores it.

// screenChunk is the longest DCS string GNU screen passes through in one piece.
const screenChunk = 768

// clipboardCmd returns the Cmd that sets the system clipboard to s for this terminal. What
// is copied has been through the sanitiser (invariant 9): the OSC 52 sequence itself is
// base64 and safe, but the text lands wherever the user pastes it, and a cell holding
// `ESC[201~` would end a bracketed paste there and run the rest as typed. Newlines and tabs
// are kept, so a copied payload or message keeps its shape.
func (c *common) clipboardCmd(s string) tea.Cmd {
	s = model.SanitizeText(s)
	seq := ansi.SetSystemClipboard(s)
	switch {
	case c.term.screen():
		return tea.Raw(ansi.ScreenPassthrough(seq, screenChunk))
	case c.term.tmux:
		return tea.Batch(tea.SetClipboard(s), tea.Raw(ansi.TmuxPassthrough(seq)))
	}
	return tea.SetClipboard(s)
}

// clipboard is copying (y, o, m): the clipboard sequence for this terminal (common.term), and
// what tmux said about passing it on, so `y` never claims a copy that tmux swallowed. Its
// copies return actions (the sequence, the toast, a question to tmux) for the root to carry
// out; tmux's answer comes back through Update.
type clipboard struct {
	c *common
	// ctx and tmuxBin: how to ask tmux (Options.Tmux; "" never asks).
	ctx     context.Context
	tmuxBin string
	// demo: the demo's spreadsheet exists nowhere (Options.Demo): no sheet link to copy.
	demo bool
	tmux tmuxClip
	// pending are the copies waiting for tmux's answer: sent once it says it passes the
	// clipboard on, else the advice instead.
	pending []pendingCopy
}

// pendingCopy is a copy waiting for tmux's answer: the text, what to say once it is copied,
// and what follows it (nil: nothing), told whether the copy went out.
type pendingCopy struct {
	s, said string
	after   func(copied bool) action
}

// tmuxClip is what tmux said about passing the clipboard on, and its set-clipboard when it
// drops OSC 52 (tmuxClipOff), for the advice.
type tmuxClip struct {
	clip         tmuxClipState
	setClipboard string
}

// copyText copies s and says what was copied.
func (cb *clipboard) copyText(what, s string) action {
	return cb.copy(s, fmt.Sprintf("copied %s: %s", what, truncate(cellLine(s), 40)))
}

// copy copies s and toasts said (see copyThen).
func (cb *clipboard) copy(s, said string) action { return cb.copyThen(s, said, nil) }

// copyThen copies s, toasts said and carries on with after(true), unless the copy can't
// arrive: inside tmux whose set-clipboard isn't on (off, or external: tmux's default, which
// takes the clipboard from tmux's own copy mode but drops OSC 52 from applications) and whose
// allow-passthrough is off, tmux swallows OSC 52, and "copied" would be a lie. So inside tmux
// a copy waits for tmux's answer (asked in a Cmd) until tmux has said it passes copies on, and
// is asked again at every copy while it said it doesn't: a person who follows the advice
// (`tmux set -g set-clipboard on`) copies at the next try, without restarting. Refused, the
// copy says what to set and carries on with after(false).
func (cb *clipboard) copyThen(s, said string, after func(copied bool) action) action {
	p := pendingCopy{s, said, after}
	if !cb.c.term.tmux || cb.tmuxBin == "" || cb.tmux.clip == tmuxClipOn || cb.tmux.clip == tmuxClipNoAnswer {
		return cb.send(p)
	}
	cb.pending = append(cb.pending, p)
	if cb.tmux.clip == tmuxClipAsking {
		return nil
	}
	cb.tmux.clip = tmuxClipAsking
	return cmdAction{queryTmuxClipboard(cb.ctx, cb.tmuxBin)}
}

// send sends a copy to the terminal, says so and carries on.
func (cb *clipboard) send(p pendingCopy) action {
	acts := actions{cmdAction{cb.c.clipboardCmd(p.s)}, toastAction{toastInfo, p.said}}
	if p.after != nil {
		acts = append(acts, p.after(true))
	}
	return acts
}

// tmuxClipState is what tmux said about passing the clipboard on.
type tmuxClipState int

const (
	tmuxClipUnknown  tmuxClipState = iota // not asked yet (or no tmux binary to ask)
	tmuxClipAsking                        // a query is on its way
	tmuxClipOn                            // set-clipboard on, or allow-passthrough on
	tmuxClipOff                           // neither: OSC 52 never reaches the terminal
	tmuxClipNoAnswer                      // tmux couldn't be asked: copies go out as usual
)

// tmuxClipboardAdvice is what to do when tmux swallows the clipboard, its set-clipboard
// being setting.
func tmuxClipboardAdvice(setting string) string {
	if setting == "" {
		setting = "not on"
	}
	return "nothing copied: tmux drops the clipboard sequence (set-clipboard " + cellLine(setting) + "). " +
		"Run `tmux set -g set-clipboard on` (and add it to ~/.tmux.conf), then copy again"
}

// tmuxClipMsg is tmux's answer about its clipboard options.
type tmuxClipMsg struct {
	setClipboard, passthrough string
	err                       error
}

// queryTmuxClipboard asks the tmux server we run in (the process's own $TMUX) for its
// set-clipboard and allow-passthrough options. It runs the tmux binary, so it is a Cmd, and
// bounded: a hung tmux must not leave the answer pending for long.
func queryTmuxClipboard(ctx context.Context, bin string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		get := func(opt string) (string, error) {
			out, err := exec.CommandContext(ctx, bin, "show-options", "-gv", opt).Output()
			return strings.TrimSpace(string(out)), err
		}
		sc, err := get("set-clipboard")
		if err != nil {
			return tmuxClipMsg{err: fmt.Errorf("ask tmux for set-clipboard: %w", err)}
		}
		pt, _ := get("allow-passthrough") // tmux before 3.3 has no such option: off
		return tmuxClipMsg{setClipboard: sc, passthrough: pt}
	}
}

// Update takes tmux's answer (tmuxClipMsg). Only set-clipboard on passes an application's
// OSC 52 on (external, the default, and off drop it), or allow-passthrough on/all the wrapped
// copy: with neither, the copies waiting are not sent, the advice says what to set (once for
// them all) and each carries on as not copied; otherwise they are sent. tmux that can't be
// asked is not asked again, and copies go out as usual.
func (cb clipboard) Update(msg tea.Msg) (clipboard, action) {
	a, ok := msg.(tmuxClipMsg)
	if !ok {
		return cb, nil
	}
	pending := cb.pending
	cb.pending = nil
	var acts actions
	switch {
	case a.err != nil:
		cb.tmux.clip = tmuxClipNoAnswer
	case a.setClipboard != "on" && a.passthrough != "on" && a.passthrough != "all":
		cb.tmux.clip, cb.tmux.setClipboard = tmuxClipOff, a.setClipboard
		acts = append(acts, toastAction{toastError, tmuxClipboardAdvice(a.setClipboard)})
		for _, p := range pending {
			if p.after != nil {
				acts = append(acts, p.after(false))
			}
		}
		return cb, acts
	default:
		cb.tmux.clip = tmuxClipOn
	}
	for _, p := range pending {
		acts = append(acts, cb.send(p))
	}
	return cb, acts
}

// copyID copies the ID of the cursor row of ts (`y` in the table).
func (cb *clipboard) copyID(ts *tabState) action {
	if ts == nil || ts.data == nil {
		return nil
	}
	r, _ := ts.current()
	if r == nil {
		return nil
	}
	if r.ID == "" {
		return toastAction{toastInfo, "this row has no ID to copy"}
	}
	return cb.copy(r.ID, "copied ID "+shortID(r.ID))
}

// sheetLink is the Google Sheets address of a row: the spreadsheet, the tab (gid) and the
// row's range as loaded (a row number is fine for a link; writes go by ID).
func sheetLink(spreadsheetID string, t *model.Table, r *model.Record) string {
	return fmt.Sprintf("https://docs.google.com/spreadsheets/d/%s/edit#gid=%d&range=A%d", url.PathEscape(spreadsheetID), t.SheetID, r.Row)
}

// copyLink copies the sheet link of row r of ts in spreadsheet id (`o`).
func (cb *clipboard) copyLink(ts *tabState, r *model.Record, id string) action {
	if ts == nil || ts.data == nil || r == nil {
		return nil
	}
	if cb.demo {
		return toastAction{toastInfo, fmt.Sprintf("the demo's sheet exists only in this process: it has no Google Sheets link (%s copies one on a real sheet)", hintKeys(cb.c.keys.CopyLink.Keys()...))}
	}
	if id == "" {
		return toastAction{toastInfo, "no spreadsheet ID to link to"}
	}
	link := sheetLink(id, ts.data.table, r)
	return cb.copy(link, fmt.Sprintf("copied the sheet link to %s row %d (gid=%d&range=A%d)", cellLine(ts.name()), r.Row, ts.data.table.SheetID, r.Row))
}
