// Package postgres is triage's PostgreSQL store: the same workbook the sheets store serves
// (inbox, failed_calls, jobs), with the same answers, for a team that has outgrown the sheet
// (docs/DESIGN.md §11).
//
// Each tab is a table whose columns are the tab's schema (model.SchemaFor), every cell text as
// the sheet holds it; the ID is the primary key and a dead letter's key is unique. Writes are
// conditional (UPDATE … WHERE the row's identity AND every cell the edit expected), so a
// conflict is exact and no write lands on another row (invariant 1); each Apply is one
// transaction whose token settles a commit whose answer was lost. A trigger NOTIFYs every
// change (Watch). The queue is claimed with FOR UPDATE SKIP LOCKED (Claim, Finish,
// RequeueStale), and the producer's dead-letter sink is INSERT … ON CONFLICT (key) DO NOTHING.
//
// A worker is one call (Work: claim → work → terminal status, without a lock service), or a
// loop of them (WorkAll); a claim requeued as stale while the work ran is not finished by the
// old worker (ErrClaimLost):
//
//	st, err := postgres.Open(ctx, os.Getenv("TRIAGE_DATABASE_URL"), postgres.Options{})
//	...
//	n, err := st.WorkAll(ctx, "worker-1", func(ctx context.Context, job postgres.Job) error {
//		return send(ctx, job.Type, job.Payload) // nil: done; an error: status error, for a person
//	})
//
// The schema is versioned migrations embedded in the binary (goose), applied by Migrate
// (`triage init`). It imports model only, never sheets or tui.
package postgres
