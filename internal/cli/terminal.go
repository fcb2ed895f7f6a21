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

// listPipedWidth is the width `list -o table` fits to when stdout is not a terminal and
// $COLUMNS doesn't say, or when the terminal's width can't be read.
const listPipedWidth = 80

// stdoutWidth says whether stdout is a terminal, and the width a table printed there may
// take: $COLUMNS when it is a positive number (a shell's or a user's override), else the
// terminal's width, else listPipedWidth. Tests set e.termWidth (0: not a terminal).
func (e *env) stdoutWidth() (width int, terminal bool) {
	if e.termWidth != nil {
		width = e.termWidth(e.stdout)
		terminal = width > 0
	} else if terminal = isTerminal(e.stdout); terminal {
		width = terminalWidth(e.stdout)
	}
	if c := e.vars().columns; c > 0 {
		width = c
	}
	if width <= 0 {
		width = listPipedWidth
	}
	return width, terminal
}
