package cli

import (
	"time"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/internal/report"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
)

// reportRun gathers what the report and the alert describe.
func reportRun(s *settings, t *model.Table, sel replay.Selection, sum model.ReplaySummary, doc *replayDoc, started, ended time.Time, rs report.Settings, secret func(string) string) report.Run {
	rs.Sources = report.Sources(s.cfg)
	return report.Run{
		Tab: t.Config.Name, SheetGID: t.SheetID, SpreadsheetID: s.spreadsheet, Store: storeName(s),
		Summary: sum, Selected: doc.Selected, UnknownIDs: sel.Unknown, Excluded: sel.Excluded, Stuck: sel.Stuck(t, sum),
		Started: started, Ended: ended, ExitCode: doc.ExitCode,
		Settings: rs, Secrets: report.Secrets(s.cfg, secret),
	}
}

// storeName names the database a command works on, its password redacted ("" for the sheet).
func storeName(s *settings) string {
	if s.databaseURL == "" {
		return ""
	}
	return config.RedactURL(s.databaseURL)
}
