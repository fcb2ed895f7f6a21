package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/sheets"
)

// editDoc is the JSON document of set-status, clear-error and requeue-stale (--json): every
// ID's fate, agreeing with the exit code. The text output is printed from the same facts.
type editDoc struct {
	Tab    string `json:"tab"`
	DryRun bool   `json:"dry_run,omitempty"`
	// Changed are the rows written (or, in a dry run, that would be).
	Changed []editDocRow `json:"changed"`
	// Unchanged are the rows not written and why: already as asked (done) or refused.
	Unchanged []editDocNote `json:"unchanged"`
	// Conflicts are rows whose cells changed since they were read; nothing was written there.
	Conflicts []string `json:"conflicts"`
	// Missing are IDs no row had: none when the tab was loaded (a mistyped ID), or none at
	// write time (deleted, or their ID changed since the load).
	Missing []string `json:"missing"`
	// Damaged are cells of rows inserted while triage wrote that its write hit and could not
	// put back exactly (model.Damage): someone must look at them.
	Damaged []string `json:"damaged"`
	// Recovered are cells another triage's unfinished write (a killed process's) had left on
	// rows it was not meant for, which this command put back first (model.Recovery).
	Recovered []string `json:"recovered"`
	// Unknown are the rows a write that failed may have changed (its answer lost, the store
	// gone mid-write): read them again before acting on them. NotWritten are the rows a
	// write that failed did not change. Error says why the write failed.
	Unknown    []string `json:"unknown"`
	NotWritten []string `json:"not_written"`
	Error      string   `json:"error,omitempty"`
	ExitCode   int      `json:"exit_code"`

	// column names a field as the tab names its column (columnNames): the keys of set.
	column func(model.Field) string
}

type editDocRow struct {
	ID  string `json:"id"`
	Row int    `json:"row"`
	// Set is what the row was (or would be) set to, by column name as the tab's header
	// row spells it ("claimedAt"), the keys of list --json's fields.
	Set map[string]string `json:"set"`
	// Note says more about the row (requeue-stale: who claimed it and how long ago).
	Note string `json:"note,omitempty"`
}

type editDocNote struct {
	ID     string `json:"id"`
	Row    int    `json:"row,omitempty"`
	Reason string `json:"reason"`
	// Done is set when the row already is as asked: not an error.
	Done bool `json:"done"`
}

// newEditDoc is the empty document of a command on tab, whose columns column names.
func newEditDoc(tab string, column func(model.Field) string) *editDoc {
	return &editDoc{Tab: tab, Changed: []editDocRow{}, Unchanged: []editDocNote{}, Conflicts: []string{}, Missing: []string{}, Damaged: []string{}, Recovered: []string{},
		Unknown: []string{}, NotWritten: []string{}, column: column}
}

// columnNames names a table's fields as its header row does ("claimedAt", "lastError"), so
// what an edit command says it set reads as the sheet's columns and as list --json's fields;
// a field the tab has no column for is named as triage init would create it.
func columnNames(t *model.Table) func(model.Field) string {
	return func(f model.Field) string {
		if c := t.Header.Col(f); c >= 0 && c < len(t.Header.Headers) && t.Header.Headers[c] != "" {
			return t.Header.Headers[c]
		}
		return schemaColumnNames(t.Config.Role)(f)
	}
}

// schemaColumnNames names a role's fields by the headers of its schema: the columns of a
// database's tables, which list --json's fields are keyed by there.
func schemaColumnNames(role model.Role) func(model.Field) string {
	return func(f model.Field) string {
		if c, ok := model.SchemaFor(role).Column(f); ok {
			return c.Header
		}
		return string(f)
	}
}

// failedWrite records a write that failed: every row it was to change is unknown (the store
// says the write may have landed) or not written; the document is printed still, so a
// script reads every row's state and the exit code, as after a write that ran.
func (d *editDoc) failedWrite(e *env, edits []model.Edit, err error, asJSON bool) error {
	werr := writeFailed(d.Tab, err)
	var ee *exitError
	if errors.As(werr, &ee) {
		d.ExitCode = ee.code
	}
	d.Error = model.SanitizeLine(err.Error())
	for _, ed := range edits {
		if errors.Is(err, model.ErrMayHaveLanded) {
			d.Unknown = append(d.Unknown, ed.ID)
		} else {
			d.NotWritten = append(d.NotWritten, ed.ID)
		}
	}
	if asJSON {
		if perr := d.print(e, true); perr != nil {
			return perr
		}
	}
	return werr
}

// notDone counts the rows the command was asked to change and didn't (damaged cells of
// other rows are not among them: see failure).
func (d *editDoc) notDone() int {
	n := len(d.Conflicts) + len(d.Missing)
	for _, u := range d.Unchanged {
		if !u.Done {
			n++
		}
	}
	return n
}

// addApply records a write's outcome and prints the conflicts and missing IDs to stderr.
func (d *editDoc) addApply(e *env, res model.ApplyResult) {
	for _, a := range res.Applied {
		d.Changed = append(d.Changed, editDocRow{ID: a.Edit.ID, Row: a.Row, Set: d.setFields(a.Edit)})
	}
	for _, c := range res.Conflicts {
		d.Conflicts = append(d.Conflicts, c.String())
		fmt.Fprintf(e.stderr, "conflict: %s\n", model.SanitizeLine(c.String()))
	}
	for _, dm := range res.Damaged {
		d.Damaged = append(d.Damaged, dm.String())
		fmt.Fprintf(e.stderr, "damaged: %s\n", model.SanitizeLine(dm.String()))
	}
	for _, r := range res.Recovered {
		d.Recovered = append(d.Recovered, r.String())
		fmt.Fprintf(e.stderr, "recovered: %s\n", model.SanitizeLine(r.String()))
	}
	for _, m := range res.Missing {
		d.Missing = append(d.Missing, m.ID)
		fmt.Fprintf(e.stderr, "%s: no longer in %q (deleted or its ID changed since load); nothing written\n", model.SanitizeLine(m.ID), m.Tab)
	}
}

// print writes the changed rows to stdout: as text, one line per row, or as the JSON
// document.
func (d *editDoc) print(e *env, asJSON bool) error {
	if asJSON {
		return writeJSON(e.stdout, d)
	}
	for _, c := range d.Changed {
		what := d.describeSet(c.Set)
		if c.Note != "" {
			what = c.Note
		}
		fmt.Fprintf(e.stdout, "%s\trow %d\t%s\n", model.SanitizeLine(c.ID), c.Row, model.SanitizeLine(what))
	}
	return nil
}

// editCommand is the shared shape of set-status and clear-error: load, build one edit per
// ID, apply them in one write, report every ID's fate.
//
// build returns the edit, or why there is none: done=true when the row already is as asked
// (not an error: running the same command twice is fine), false when it can't be done.
func editCommand(ctx context.Context, g *globals, e *env, tabName string, ids []string, asJSON bool, needTab func(*model.Table) error, build func(*model.Table, *model.Record) (ed model.Edit, why string, done bool)) error {
	if len(ids) == 0 {
		return usageErr("no IDs given")
	}
	st, t, settled, err := openTabToWrite(ctx, g, e, tabName, ids)
	if err != nil {
		return err
	}
	defer closeStore(st)
	if needTab != nil {
		if err := needTab(t); err != nil {
			return err
		}
	}
	doc := newEditDoc(t.Config.Name, columnNames(t))
	doc.addApply(e, settled)
	var edits []model.Edit
	for _, id := range ids {
		i := t.Index(id)
		if i < 0 {
			// No row has it: missing, as an ID whose row is gone by the time of the write.
			why := fmt.Sprintf("no row with ID %q in %q; nothing written", id, t.Config.Name)
			fmt.Fprintf(e.stderr, "%s: %s\n", model.SanitizeLine(id), model.SanitizeLine(why))
			doc.Missing = append(doc.Missing, id)
			continue
		}
		r := &t.Records[i]
		ed, why, done := build(t, r)
		if why != "" {
			fmt.Fprintf(e.stderr, "%s: %s\n", model.SanitizeLine(id), model.SanitizeLine(why))
			doc.Unchanged = append(doc.Unchanged, editDocNote{ID: id, Row: r.Row, Reason: why, Done: done})
			continue
		}
		edits = append(edits, ed)
	}
	if len(edits) > 0 {
		res, err := st.Apply(ctx, edits)
		if err != nil {
			return doc.failedWrite(e, edits, err, asJSON)
		}
		doc.addApply(e, res)
	}
	notDone := doc.notDone()
	if notDone > 0 || len(doc.Damaged) > 0 {
		doc.ExitCode = exitPartial
	}
	if err := doc.print(e, asJSON); err != nil {
		return err
	}
	if notDone > 0 {
		return &exitError{code: exitPartial, err: fmt.Errorf("%s of %d not changed%s", words.Count(notDone, "row", "rows"), len(ids), doc.damagedNote())}
	}
	if len(doc.Damaged) > 0 {
		return &exitError{code: exitPartial, err: fmt.Errorf("all %d changed, but %s", len(ids), doc.damagedNote()[2:])}
	}
	return nil
}

// damagedNote says, after a comma, how many cells of other rows a write hit and could not
// put back exactly ("" when none).
func (d *editDoc) damagedNote() string {
	if len(d.Damaged) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s of rows inserted meanwhile cleared (see \"damaged:\" above): check them", words.Count(len(d.Damaged), "cell", "cells"))
}

// setFields is what an edit writes, by column name.
func (d *editDoc) setFields(ed model.Edit) map[string]string {
	out := make(map[string]string, len(ed.Set))
	for f, v := range ed.Set {
		out[d.column(f)] = v
	}
	return out
}

// describeSet renders what an edit writes (set, by column name), for the text output, by
// triage's field names as it always has: `status="done" error=""`.
func (d *editDoc) describeSet(set map[string]string) string {
	var parts []string
	for _, f := range []model.Field{model.FStatus, model.FError, model.FLastError, model.FUpdatedAt, model.FKey} {
		if v, ok := set[d.column(f)]; ok {
			parts = append(parts, fmt.Sprintf("%s=%q", f, v))
		}
	}
	return strings.Join(parts, " ")
}

// writeFailed maps a failed write to its exit code: the store refusing service (read-only,
// unreachable or cut off mid-write, not shared, no access, its quota spent) is 2, like at
// startup; anything else leaves the rows not done, which is 1.
func writeFailed(tab string, err error) error {
	code := exitPartial
	for _, setup := range []error{sheets.ErrReadOnly, postgres.ErrReadOnly, sheets.ErrUnreachable, sheets.ErrNotShared, sheets.ErrNotFound, sheets.ErrUnauthorized, sheets.ErrRateLimited} {
		if errors.Is(err, setup) {
			code = exitUsage
		}
	}
	if connectionLost(err) {
		code = exitUsage
	}
	return &exitError{code: code, err: fmt.Errorf("write to %q: %w", tab, err)}
}

// connectionLost reports whether err is a store's connection failing: refused, reset, closed
// mid-answer, a database connection that could not be made or was cut.
func connectionLost(err error) bool {
	var nerr net.Error
	var cerr *pgconn.ConnectError
	return errors.As(err, &nerr) || errors.As(err, &cerr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}
