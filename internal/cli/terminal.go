package cli

import (
	"io"
	"os"

	uv "github.com/charmbracelet/ultraviolet"
)

// isTerminal reports whether w is a terminal (a character device), where the progress line
// is redrawn in place and help may be drawn in colour.
func isTerminal(w io.Writer) bool {
	f, ok := unwrapWriter(w).(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// terminalWidth returns the width in columns of the terminal w writes to, or 0 when w is not
// a terminal or its width can't be read.
func terminalWidth(w io.Writer) int {
	if !isTerminal(w) {
		return 0
	}
	f := unwrapWriter(w).(*os.File)
	width, _, err := uv.NewSizeNotifier(f).GetSize()
	if err != nil || width <= 0 {
		return 0
	}
	return width
}

// widthOf is the width of the terminal w writes to, as the env measures it (tests give a
// fixed one): 0 when unknown or not a terminal.
func (e *env) widthOf(w io.Writer) int {
	if e.termWidth != nil {
		return e.termWidth(w)
	}
	return terminalWidth(w)
}
