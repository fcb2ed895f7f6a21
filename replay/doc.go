// Package replay is triage's idempotent retry client and its bulk runner: it replays
// dead-lettered calls (rows of a `failed_calls` tab) to the destinations their source allows,
// each attempt carrying the row's original idempotency key, classifies every answer into one of
// five outcomes, halts a bulk run when the integration is broken, and writes each row's outcome
// back to the sheet in batches.
//
// The package imports model and store only, and speaks model's replay vocabulary
// (model.RowState, model.Halt, model.Refusal, model.ReplayPlan, model.ReplayEvent,
// model.ReplaySummary). The store it writes back through is the small Store interface
// (store.Applier: sheets.Store and postgres.Store satisfy it); the
// terminal UI and `triage replay` both call Run, the one replay-then-write-back loop: the
// command directly, the TUI through Runner, which satisfies the TUI's Replayer as it is.
//
// Guarantees (DESIGN §3, invariants 3-8):
//   - every attempt of a row carries the row's effective key (model.EffectiveKey); a key that
//     is not in the row's key cell yet (minted, or taken from the payload's key field) is
//     written there before the row's first request leaves, so a later config change or a
//     corrected cell can't give the row another key (a cell already holding that key, saved
//     by another session, counts as written; a row whose key can't be written isn't sent);
//   - no row is sent by two runs at once: before its first request a run leases every row it
//     plans (a store that is a Leaser: the sheet's and the database's are), skips the rows
//     another live run holds, saying whose (model.Leases, ReplaySummary.Held), renews its
//     lease after each write-back and releases it when it ends; a killed run's rows are free
//     once its process is provably gone or its lease has run out;
//   - nothing is sent from a stale snapshot: before any request leaves, one Apply (the same
//     write that saves the keys) checks every planned row's status and key cells against the
//     sheet as loaded; a row changed since (discarded, delivered by another session, its key
//     corrected, deleted) is refused, and if that write fails nothing is sent;
//   - the body is the payload cell byte for byte, except that a body key field is inserted
//     where the source wants one and the payload lacks it;
//   - requests go only to URLs under the source's url_prefixes (model.URLUnderPrefixes: parsed
//     comparison, and a path a server could read differently is refused outright);
//     redirects are never followed, except the Apps Script hop (one GET to a Location under
//     redirect_prefixes by the same rule, checked and sent as it came, without body or
//     secrets);
//   - a key or header value no HTTP header can carry (control characters) is refused before
//     sending: no attempt is counted and it can't halt a run;
//   - text from a destination (a Location, a body, a transport error quoting one) is capped
//     (MaxDetail) before it reaches a Result, so one answer can't overflow an error cell and
//     cost the rest of a batch its write-back;
//   - a systemic answer halts a run at once and three retryable final results in a row halt it,
//     run-wide; after a halt nothing new is sent (requests already in flight finish and are
//     written back; rows still waiting are not sent and are reported not attempted);
//   - a run given a deadline (RunOptions.Deadline) stops the same way StopMargin before it,
//     time enough for the requests in flight and the write-back, and says it left rows
//     (ReplaySummary.TimeUp); a row limit (RunOptions.Limit) takes the oldest rows and names
//     the rest (ReplaySummary.LeftOut), which are not leased, checked or sent;
//   - until a source has answered a request of the run with success (delivered or duplicate),
//     at most one request to it is in flight, so a broken integration costs one call before
//     its systemic answer halts the run; the first success opens the source to its bounds;
//   - rejected and discarded rows are never replayed by a bulk run.
//
// Choices where DESIGN.md is silent:
//   - Only a success opens a source to its bounds: a retryable or deferred answer says nothing
//     about the credential, and a rejection (an answer about one row) may come from a check
//     made before it. The one request is taken per request, not per row, so a row sleeping in
//     backoff lets the next row's request go.
//   - Halt rule: a deferred row (Retry-After beyond the cap) counts as retryable; a rejected
//     row neither counts nor resets the count (it is a real answer about one row: the
//     destination is up but not shown to be accepting calls); duplicate resets it like
//     delivered. Results cut short by the halt or a cancel don't count.
//   - A secret missing from the environment is systemic and nothing is sent; a secret whose
//     value a header can't carry (a trailing \r from a CRLF file) refuses each row instead,
//     naming the variable: it is not an answer from the destination.
//   - The key_ttl guard also refuses a row dated more than KeyTTLSkew in the future: its age
//     is unknown, so it can't be shown to be within the key lifetime (--force overrides).
//   - On a tab without a key column, a minted key is refused (it would live nowhere) but a
//     payload key is sent unsaved: the payload carries it, and if the config later stops
//     reading that field the row's key becomes a minted one, which such a tab refuses.
//   - Two selected rows with the same key: the second is refused, naming the first
//     (replaying both would be one call); the first goes on as if alone.
//   - The apps-script preset keeps the default (systemic) for 400, 405 and 422.
//   - A url_prefixes entry without a trailing slash matches whole path segments only.
//   - A Location that is relative is not followed by the apps-script hop (Apps Script always
//     answers with an absolute one); resolving it would hide dot segments.
//   - Cancelling never aborts a request in flight: it finishes or hits its per-attempt timeout,
//     so its outcome is known and written back.
//
// # Sending calls in the first place: Producer
//
// The client that replays is the one callers should use to begin with (DESIGN §10, the Apps Script
// drop-in's safeFetch). A Producer sends a Call through a Client, so the same outcome table and
// presets, backoff, Retry-After, rate limits, timeouts and allowlist apply, and hands every
// call that is not delivered to a DeadLetterSink (*sheets.Store appends it to failed_calls,
// *postgres.Store inserts it).
// The contract:
//   - the key written to the sheet is the key that was sent (Call.Key trimmed, else the
//     payload's key field, Producer.KeyFields), so a later `triage replay` carries it and the
//     destination sees one call, however often it is replayed; a call that was never sent and
//     had no key is recorded without one, and a replay mints and saves its key before sending;
//   - the payload written is the body as it was sent (a body key field included), byte for
//     byte: a body a cell can't hold whole is not shortened but reported (Sent.Err);
//   - every call ends delivered, recorded (Sent.DeadLettered), or with Sent.Err saying why
//     neither, so the caller keeps it: nothing is dropped silently. SendAll applies the halt
//     rule above (Producer.HaltAfterRetryable tunes it) and records the calls a halt left
//     unsent.
//
// Which ends are recorded is Producer.DeadLetterOn (default: retryable, deferred included,
// systemic, rejected, and refused unsent). Every record has status dead, rejected ones too:
// the destination may accept the call once its cause is fixed, and a person decides.
//
// The design it follows, and the section (§N) and invariant numbers its comments cite, are in
// docs/DESIGN.md.
package replay
