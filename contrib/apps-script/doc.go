// Package appsscript holds the Apps Script drop-in (safeFetch.gs): the triage client's
// contract for callers that live in Google Apps Script, where no Go runs. It has no Go code
// of its own: its tests run the script's Node tests (safeFetch.test.js) so that `go test ./...`
// checks the drop-in with everything else, and check that the keys it sends are the keys
// triage would derive from the same dead-letter row, and that it finds the dead-letter
// columns (with SAFEFETCH.deadLetter.columns, triage's [tabs.deadletter.columns]) where
// triage finds them. README.md says how to use it.
package appsscript
