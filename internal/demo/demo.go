// Package demo is `triage demo`'s world: the embedded demo workbook (an inbox, a dead-letter
// queue and a job queue, with hostile text), and the in-process receivers its dead-lettered
// calls are replayed to.
//
// The design it follows, and the section (§N) and invariant numbers its comments cite, are in
// docs/DESIGN.md.
package demo

import (
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets/emulator"
)

//go:embed demo.json
var demoJSON []byte

// demoBase is the serial date the demo workbook's timestamps were written relative to;
// Workbook shifts them so the newest message is minutes old whenever the demo runs.
const demoBase = 46356.0

// demoTimeHeaders are the columns whose serial numbers are shifted.
var demoTimeHeaders = map[string]bool{"timestamp": true, "claimedat": true, "updatedat": true, "replayed_at": true}

// Workbook returns the embedded demo workbook with its dates moved to now.
func Workbook(now time.Time) (*emulator.Workbook, error) {
	wb, err := emulator.ParseWorkbook(demoJSON)
	if err != nil {
		return nil, fmt.Errorf("embedded demo workbook: %w", err)
	}
	loc, err := time.LoadLocation(wb.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	shift := model.TimeToSerial(now, loc) - demoBase
	for _, sh := range wb.Sheets {
		if len(sh.Rows) == 0 {
			continue
		}
		var cols []int
		for i, h := range sh.Rows[0] {
			if s, ok := h.(string); ok && demoTimeHeaders[strings.ToLower(s)] {
				cols = append(cols, i)
			}
		}
		for _, row := range sh.Rows[1:] {
			for _, c := range cols {
				if c < len(row) {
					if f, ok := row[c].(float64); ok {
						row[c] = f + shift
					}
				}
			}
		}
	}
	return wb, nil
}

// Tabs are the demo workbook's tab configs: the defaults.
func Tabs() []model.TabConfig {
	return (&config.Config{}).TabConfigs()
}
