// Command keytablegen writes tui/keytable.go (tui.DefaultKeyMap and the action names) from
// the product's key table in keymap.go at the module root. keymap.go runs it:
//
//	go generate ./...
//
// Paths are relative to the directory go generate runs it in, the module root.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/triage-dev/triage/internal/keytable"
)

func main() {
	in := flag.String("in", "keymap.go", "the Go file declaring the keyTable constant")
	out := flag.String("out", "tui/keytable.go", "the file to write")
	flag.Parse()
	src, err := keytable.Generate(*in)
	if err == nil {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "keytablegen:", err)
		os.Exit(1)
	}
}
