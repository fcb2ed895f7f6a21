package main

import (
	"fmt"
	"sort"

	"github.com/triage-dev/triage/tui"
)

// applyKeyOverrides rebinds actions from the config's [keys] table (`quit = ["q", "ctrl+c"]`)
// on top of the TUI's defaults (tui.DefaultKeyMap). Every bad entry is reported at once.
func applyKeyOverrides(km *tui.KeyMap, overrides map[string][]string) error {
	names := make([]string, 0, len(overrides))
	for n := range overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	var errs []error
	for _, action := range names {
		if err := km.Rebind(action, overrides[action]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		msg := "config [keys]:"
		for _, e := range errs {
			msg += "\n  " + e.Error()
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}
