// Package replay is triage's idempotent retry client and its bulk runner: it replays
// dead-lettered calls (rows of a `failed_calls` tab) to the destinations their source allows,
// each attempt carrying the row's original idempotency key, classifies every answer into one of
// five outcomes, halts a bulk run when the integration is broken, and writes each row's outcome
// back to the sheet in batches.
//
// The package imports model only. The store it writes back through is the small Store
// interface (sheets.Store satisfies it); the terminal UI and `triage replay` both call Run, the
// one replay-then-write-back loop.
//
// Guarantees (DESIGN §3, invariants 3-8):
//   - every attempt of a row carries the row's effective key (model.EffectiveKey); a key that
//     is not in the row's key cell yet (minted, or taken from the payload's key field) is
//     written there before the row's first request leaves, so a later config change or a
//     corrected cell can't give the row another key (a cell already holding that key, saved
//     by another session, counts as written; a row whose key can't be written isn't sent);
//   - nothing is sent from a stale snapshot: before any request leaves, one Apply (the same
//     write that saves the keys) checks every planned row's status and key cells against the
//     sheet as loaded; a row changed since (discarded, delivered by another session, its key
//     corrected, deleted) is refused, and if that write fails nothing is sent;
//   - the body is the payload cell byte for byte, except that a body key field is inserted
//     where the source wants one and the payload lacks it;
//   - requests go only to URLs under the source's url_prefixes; redirects are never followed,
//     except the Apps Script hop (one GET to a redirect_prefixes URL, without body or secrets);
//   - a systemic answer halts a run at once and three retryable final results in a row halt it;
//     after a halt nothing new is sent;
//   - rejected and discarded rows are never replayed by a bulk run.
//
// Choices where DESIGN.md is silent:
//   - Halt rule: a deferred row (Retry-After beyond the cap) counts as retryable; a rejected
//     row neither counts nor resets the count (it is a real answer about one row: the
//     destination is up but not shown to be accepting calls); duplicate resets it like
//     delivered. Results cut short by the halt or a cancel don't count.
//   - A secret missing from the environment is systemic and nothing is sent.
//   - On a tab without a key column, a minted key is refused (it would live nowhere) but a
//     payload key is sent unsaved: the payload carries it, and if the config later stops
//     reading that field the row's key becomes a minted one, which such a tab refuses.
//   - Two selected rows with the same key: the second is refused, naming the first
//     (replaying both would be one call); the first goes on as if alone.
//   - The apps-script preset keeps the default (systemic) for 400, 405 and 422.
//   - A url_prefixes entry without a trailing slash matches whole path segments only, and a
//     URL with a dot segment is refused.
//   - Cancelling never aborts a request in flight: it finishes or hits its per-attempt timeout,
//     so its outcome is known and written back.
package replay
