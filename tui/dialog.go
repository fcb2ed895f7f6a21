package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// A dialog is a modal box over the body (the status picker, a confirmation). It never reaches
// into the app: its Update returns an action, and the app decides what the action does.
type dialog interface {
	Update(msg tea.Msg) (dialog, action)
	View() string
}

// overlay draws box centered over the lines of a body (each exactly w cells), keeping the
// body visible around it, as a modal does. reset ends any style open at the seams (empty
// with NO_COLOR, where there is none).
func overlay(body []string, box string, w int, reset string) []string {
	boxLines := strings.Split(box, "\n")
	bw := 0
	for _, l := range boxLines {
		bw = max(bw, ansi.StringWidth(l))
	}
	bw = min(bw, w)
	x := max(0, (w-bw)/2)
	y := max(0, (len(body)-len(boxLines))/2)
	out := append([]string(nil), body...)
	for i, l := range boxLines {
		row := y + i
		if row >= len(out) {
			break
		}
		base := out[row]
		left := ansi.Truncate(base, x, "")
		if lw := ansi.StringWidth(left); lw < x {
			left += strings.Repeat(" ", x-lw)
		}
		right := ansi.TruncateLeft(base, x+bw, "")
		out[row] = left + reset + fitStyled(l, bw) + reset + right
	}
	return out
}
