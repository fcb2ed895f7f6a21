// Package sheets is triage's store: it loads the configured tabs of a Google Sheet, writes
// edits by row identity (never by a remembered row number), creates missing tabs and headers,
// records dead letters, and connects to the Sheets API (or a local emulator) with whatever
// credentials are at hand. The design it follows, and the section (§N) and invariant numbers its
// comments cite, are in docs/DESIGN.md.
//
// # Request budget
//
// A Load is two concurrent requests for any number of tabs; the first Load of a store asks for
// the sheet list first, then reads the tabs that exist and the Status dropdowns concurrently
// (three requests), so no request ever names a missing tab. An Apply of any number of edits is
// two requests when nothing moves, and one (the write) after LoadTab, whose read of the tab
// the first round plans from: a command reads its tab once. Every request has a deadline
// (RetryPolicy.RequestTimeout) and goes through one helper that retries 429, 5xx and network
// errors with full-jitter backoff, except a write: its cell addresses are row numbers, so a
// write is never resent; it is settled (below) and planned again. Writes store text as text
// (invariant 2) and a read-only store sends none (invariant 11).
//
// # The write round (Store.Apply)
//
// The Sheets API has no compare-and-set, and between any two requests someone may sort,
// insert or delete rows or insert a column; and any write may be applied by Google while its
// answer is lost. So a write is done in rounds, each of them:
//
//  1. Settle. A write of an earlier round whose answer was lost (a network error, a deadline,
//     a 5xx) is fenced: triage adds, itself, the developer metadata that write's journal
//     entry would have added under its ID (journal.go). Sheets refuses an ID that exists, so
//     either the fence is created (the write never landed, and now never will: a batchUpdate
//     is atomic and its createDeveloperMetadata would fail) or it is refused (the write
//     landed, or an earlier fence of ours whose own answer was lost did; the metadata's value
//     tells which). Another writer's unfinished entry whose lease ran out is settled here too
//     (recover.go).
//  2. Read the tabs (and the entries of lost writes that landed), in one values:batchGet. A
//     landed entry is checked (step 5) before anything is planned.
//  3. Plan (plan.go), against this read: first every value of ours still owed back (a
//     restore), found by its row as our write left it, in the columns the tab had then; then
//     every undecided edit, by its row's identity, its Expect checked against the row with
//     those restores applied. Edits that need no write (a conflict, a missing ID, nothing to
//     change) are decided now: a read is a consistent snapshot.
//  4. Write, in one spreadsheets.batchUpdate, atomically and in this order: delete checked
//     entries of earlier writes; add this write's entry (a hidden sheet); copy the header row
//     and every target row, whole, into it (copyPaste, values only); write the cells
//     (updateCells, text as text). The answer carries the entry.
//  5. Check (apply.go). The entry shows each target row and the header exactly as they were
//     at the instant of the write. A target whose row and header read exactly as in step 2 was
//     the row meant: its edits are applied, its restores done. Any other target hit a row it
//     was not meant for (rows moved), or one that changed since the read: each cell the
//     write changed there becomes a restore, with the value the journal shows it held (exact
//     even for a row inserted a moment before, and with its type: a date stays a number),
//     folded together with anything already owed to that row; its edits are planned again.
//
// The rounds end when every edit is decided and nothing is owed; after maxWriteRounds an
// undecided edit is a conflict ("the sheet kept changing", model.Conflict.Undecided), and
// restores go on, with short waits (at most maxRestorePause), for maxRestoreRounds more, or
// until maxStuckRounds in a row have put nothing back: under an insert above the rows before
// every write each round lands one row off, and more rounds only move the same values around. A value of ours stays on a wrong row only until the next write,
// which puts it back exactly. Two cases are left: a restore whose row can't be told from
// another's (rows alike but for the owed cells) is reported in ApplyResult.Damaged, naming
// the row, column and values; and a row that someone also edited, in that same moment, in a
// column we did not write, where its identity can't find it (it has none, or an owed cell
// decides it) reads as a deleted row, and our value on it is left.
//
// Ordering subtleties, each load-bearing:
//   - The copies come before the cell writes in the batch, so the entry holds the rows as
//     they were before this write, not after.
//   - A restore is found by the row as it was left, not by the row's identity: a key of ours
//     on a row is not that row's identity. The identity is used only where no owed cell
//     decides it (putting a key back gives any row that key), and blank rows have none.
//   - A restore made from this write's check is never folded into another target of the same
//     write: it describes the row after the write, the others describe rows before it.
//   - A write refused whole (4xx) changed nothing, and is planned again; one whose outcome is
//     unknown is never resent, only fenced and read.
//
// # Journal entries
//
// Each write leaves its entry (a hidden sheet `_triage_journal_<time>_<random>` and its
// developer metadata) until the store's next write deletes it, in the same batch; Store.Close
// deletes what is left (the CLI calls it before it exits). An entry carries its write's plan
// and a lease (lease.go), so that when its writer dies any other triage settles it
// (recover.go); sorted or renamed it still proves, deleted or edited it is reported as damage.
//
// # Dead letters (Store.DeadLetter)
//
// The sink appends with appendCells (after the last row that holds anything, whatever column
// A holds) in a batch that also copies the header row into an entry: the header the rows
// landed under. If someone moved a column since the header read, the rows are cleared (found
// by their content, as restores) and appended again; a lost answer is settled by the fence,
// so a letter is never recorded twice.
package sheets
