package postgres

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/triage-dev/triage/internal/backoff"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/store"
)

// maxTries bounds the rounds of one Apply's transaction: a row that changed between the read
// and the conditional write is read and decided again in the next round; past the last its
// edits are conflicts ("kept changing").
const maxTries = 3

// Apply writes edits by row identity, with the answers the sheets store gives (invariant 1):
// each edit's row is found by its identity (the ID, or a dead letter's effective key) and
// written conditionally: only while the row's key AND every cell an edit expected or writes
// still holds what was read (and, for a dead letter, its identity columns), so a write never
// lands on another row and a changed cell is an exact conflict. An edit whose ID is gone is in
// Missing; one whose cell changed, whose ID is on two rows or which sets a field the table
// lacks is in Conflicts; every other edit is in Applied. An edit that changes nothing is
// applied with nothing written and no audit stamp. A key that holds a value is never
// changed, and a key already on another row is a conflict (invariant 3).
//
// The edits of one call are one transaction, decided in order (a later edit sees an earlier
// one's values), in a constant number of round trips whatever their number (applyTx), each
// row written once; the transaction records a token: a commit whose answer is lost is
// settled by looking the token up on a new connection, so Apply reports it written only when
// it was, and an error only when it was not (or, if even that can't be read, says so).
func (s *Store) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	op := store.ApplyOp(len(edits))
	if s.readOnly {
		return model.ApplyResult{}, fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	if len(edits) == 0 {
		return model.ApplyResult{}, nil
	}
	if _, err := store.EditTabs(op, s.tabs, edits); err != nil {
		return model.ApplyResult{}, err
	}
	// The person is this call's (model.WithActor) where one is given: one Store serves every
	// session of `triage serve`, each write recording its own person.
	actor := store.Actor(ctx, s.actor)
	now := s.stamp()
	for try := 1; ; try++ {
		res, err := s.applyTx(ctx, op, edits, actor, now)
		var pgErr *pgconn.PgError
		if try < maxTxTries && errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "23505") {
			// A deadlock with another writer (their rows locked in the other order: a script's,
			// since triage's own writes lock rows in one order): the server rolled ours back
			// whole, so it is run again from the start, after a pause: run again at once, ours
			// could take the first row back before the other writer, woken by our rollback,
			// gets it, and the same deadlock comes round again. Or a key another writer put on
			// its row after this transaction read the keys taken (a unique violation): run
			// again, the read sees that key and the edit is a conflict.
			if err := backoff.Sleep(ctx, deadlockPause(try)); err != nil {
				return model.ApplyResult{}, fmt.Errorf("%s to %s: %w; nothing was written", op, s.url, err)
			}
			continue
		}
		return res, err
	}
}

// maxTxTries bounds how often an Apply whose transaction the server chose as a deadlock's
// victim is run again.
const maxTxTries = 5

// deadlockPause is how long a deadlock's victim waits before its try'th run again: growing,
// with jitter, so two victims don't meet again in step.
func deadlockPause(try int) time.Duration {
	base := time.Duration(try) * 20 * time.Millisecond
	return base + rand.N(base)
}

// applyTx is one attempt at an Apply's transaction, in a constant number of round trips
// whatever the number of edits: the rows of every edit are read in one pipelined batch (one
// query per table), every edit is decided against them in order in memory, and each row's
// outcome is written by one statement per table and shape (the columns written and checked),
// all in a second batch; only rows that changed between the read and the write are read and
// decided again, in the same transaction, in further rounds (at most maxTries).
func (s *Store) applyTx(ctx context.Context, op string, edits []model.Edit, actor, now string) (model.ApplyResult, error) {
	fail := func(err error) (model.ApplyResult, error) {
		return model.ApplyResult{}, fmt.Errorf("%s to %s: %w; nothing was written", op, s.url, err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fail(err)
	}
	tx := &lazyTx{conn: conn}
	defer tx.end(ctx)
	w := &writeTx{s: s, tx: tx, actor: actor, now: now, out: make([]decision, len(edits))}
	pending := make([]int, len(edits))
	for i := range pending {
		pending[i] = i
	}
	for try := 0; try < maxTries && len(pending) > 0; try++ {
		rows, err := w.locate(ctx, edits, pending)
		if err != nil {
			return fail(err)
		}
		plan := w.decide(edits, pending, rows)
		if pending, err = w.write(ctx, plan); err != nil {
			return fail(err)
		}
	}
	for _, i := range pending {
		w.out[i] = decision{conflict: &model.Conflict{Edit: edits[i], Field: model.FStatus,
			Reason: "the row kept changing while triage wrote it (refresh and retry)", Undecided: true}}
	}
	var res model.ApplyResult
	for i, d := range w.out {
		switch {
		case d.missing:
			res.Missing = append(res.Missing, edits[i])
		case d.conflict != nil:
			res.Conflicts = append(res.Conflicts, *d.conflict)
		default:
			res.Applied = append(res.Applied, model.Applied{Edit: edits[i], Row: d.row})
		}
	}
	if !w.wrote {
		return res, nil
	}
	return s.commit(ctx, op, tx, w.token, res)
}

// decision is what became of one edit.
type decision struct {
	missing  bool
	conflict *model.Conflict
	row      int // applied: the row's number
}

// lazyTx is an Apply's transaction on its own connection, begun by its first batch: BEGIN
// goes in that batch's pipeline rather than a round trip of its own.
type lazyTx struct {
	conn      *pgxpool.Conn
	begun     bool
	committed bool
}

// SendBatch sends b in the transaction, beginning it first if it isn't yet.
func (t *lazyTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if t.begun {
		return t.conn.SendBatch(ctx, b)
	}
	t.begun = true
	nb := &pgx.Batch{QueuedQueries: append([]*pgx.QueuedQuery{{SQL: "BEGIN ISOLATION LEVEL READ COMMITTED"}}, b.QueuedQueries...)}
	return &begunResults{BatchResults: t.conn.SendBatch(ctx, nb)}
}

// commit commits the transaction; a COMMIT the server answers ROLLBACK (the transaction had
// failed) is an error.
func (t *lazyTx) commit(ctx context.Context) error {
	tag, err := t.conn.Exec(ctx, "COMMIT")
	if err != nil {
		return err
	}
	t.committed = true
	if tag.String() != "COMMIT" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// end rolls back what wasn't committed and gives the connection back (the pool closes one
// still in a transaction: a ROLLBACK that didn't get through).
func (t *lazyTx) end(ctx context.Context) {
	if t.begun && !t.committed {
		_, _ = t.conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
	}
	t.conn.Release()
}

// begunResults are a first batch's results with its BEGIN's taken first.
type begunResults struct {
	pgx.BatchResults
	began bool
	err   error
}

func (r *begunResults) begin() error {
	if !r.began {
		r.began = true
		_, r.err = r.BatchResults.Exec()
	}
	return r.err
}

func (r *begunResults) Exec() (pgconn.CommandTag, error) {
	if err := r.begin(); err != nil {
		return pgconn.CommandTag{}, err
	}
	return r.BatchResults.Exec()
}

func (r *begunResults) Query() (pgx.Rows, error) {
	if err := r.begin(); err != nil {
		return nil, err
	}
	return r.BatchResults.Query()
}

func (r *begunResults) QueryRow() pgx.Row {
	if err := r.begin(); err != nil {
		return errRow{err}
	}
	return r.BatchResults.QueryRow()
}

// errRow is a row that is an error.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// writeTx is one Apply's transaction.
type writeTx struct {
	s     *Store
	tx    *lazyTx
	actor string
	now   string
	out   []decision // by edit index
	token string     // recorded with the first write (commit)
	wrote bool       // a row was written
}

// found is a row as read: its primary key, number and cells in schema order.
type found struct {
	pk    any
	no    int64
	cells []string
}

func (t table) index(f model.Field) int { return slices.Index(t.fields, f) }

func (t table) get(cells []string, f model.Field) (string, bool) {
	i := t.index(f)
	if i < 0 {
		return "", false
	}
	return cells[i], true
}

// located is what one round's read found: every row whose identity one of the round's edits
// names, by table, and the keys the round's edits would write that rows already hold.
type located struct {
	rows  map[string][]found // by table name, in row order
	taken map[string]any     // a key cell's value → the primary key of the row holding it
}

// locate reads, in one pipelined batch, the rows whose identity the pending edits name: by
// primary key, or for a dead letter by its effective key (the key cell trimmed; a row without
// a key by the key its content gives, model.RowIdentity, as the sheets store finds it); and
// the rows already holding a key the edits would write.
func (w *writeTx) locate(ctx context.Context, edits []model.Edit, pending []int) (located, error) {
	ids := map[string][]string{}
	var order []string
	var keys []string
	for _, i := range pending {
		e := edits[i]
		if e.ID == "" {
			continue
		}
		tc, _ := w.s.tabConfig(e.Tab)
		name := tables[tc.Role].name
		if _, ok := ids[name]; !ok {
			order = append(order, name)
		}
		ids[name] = append(ids[name], toDB(e.ID))
		if k := e.Set[model.FKey]; k != "" && tc.Role == model.RoleDeadLetter {
			keys = append(keys, toDB(k))
		}
	}
	// Tables in one fixed order, as the writes are: two Applies never wait for each other's
	// rows in opposite orders.
	slices.Sort(order)
	got := located{rows: map[string][]found{}, taken: map[string]any{}}
	if len(order) == 0 {
		return got, nil
	}
	b := &pgx.Batch{}
	for _, name := range order {
		t := tableNamed(name)
		q := "SELECT " + t.pk + ", " + t.selectList() + " FROM " + t.name + " WHERE "
		if t.role != model.RoleDeadLetter {
			q += "id = ANY($1)"
		} else {
			q += `btrim("key") = ANY($1) OR "key" IS NULL OR btrim("key") = ''`
		}
		b.Queue(q+" ORDER BY "+t.rowNo, ids[name])
	}
	if len(keys) > 0 {
		b.Queue(`SELECT "key", id FROM failed_calls WHERE "key" = ANY($1)`, keys)
	}
	br := w.tx.SendBatch(ctx, b)
	defer br.Close()
	for _, name := range order {
		t := tableNamed(name)
		rows, err := br.Query()
		if err != nil {
			return got, err
		}
		for rows.Next() {
			var pk any
			var no int64
			cells := make([]string, len(t.fields))
			dest := []any{&pk, &no}
			for i := range cells {
				dest = append(dest, &cells[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return got, err
			}
			for i := range cells {
				cells[i] = fromDB(cells[i])
			}
			got.rows[name] = append(got.rows[name], found{pk: pk, no: no, cells: cells})
		}
		if err := rows.Err(); err != nil {
			return got, err
		}
	}
	if len(keys) > 0 {
		rows, err := br.Query()
		if err != nil {
			return got, err
		}
		for rows.Next() {
			var k string
			var pk int64
			if err := rows.Scan(&k, &pk); err != nil {
				rows.Close()
				return got, err
			}
			got.taken[fromDB(k)] = pk
		}
		if err := rows.Err(); err != nil {
			return got, err
		}
	}
	return got, br.Close()
}

// rowState is a located row as this Apply's edits leave it.
type rowState struct {
	t       table
	pk      any
	no      int64
	orig    []string // as read
	cur     []string // after the edits decided so far
	ident   string   // the identity cur gives
	edits   []int    // the edits decided on this row, in order
	written map[model.Field]bool
	checked map[model.Field]bool // compared with orig by the write
}

// plan is one round's decisions: the rows to write, in primary-key order by table.
type plan struct {
	rows []*rowState
}

// decide decides the pending edits in order against the rows as read, each seeing the values
// the ones before it left (in memory), and records each edit's outcome in w.out.
func (w *writeTx) decide(edits []model.Edit, pending []int, got located) plan {
	type tabRows struct {
		tc      model.TabConfig
		byIdent map[string][]*rowState
	}
	tabs := map[string]*tabRows{}
	identity := func(tc model.TabConfig, cells []string) string {
		dtc := decodeConfig(tc)
		hm, _ := model.MapHeaders(dtc, headerStrings(tc.Role))
		return model.RowIdentity(dtc, hm, cells)
	}
	rowsOf := func(tc model.TabConfig) *tabRows {
		t := tables[tc.Role]
		if tr, ok := tabs[t.name]; ok {
			return tr
		}
		tr := &tabRows{tc: tc, byIdent: map[string][]*rowState{}}
		for _, f := range got.rows[t.name] {
			r := &rowState{t: t, pk: f.pk, no: f.no, orig: f.cells, cur: slices.Clone(f.cells),
				written: map[model.Field]bool{}, checked: map[model.Field]bool{}}
			r.ident = identity(tc, r.cur)
			tr.byIdent[r.ident] = append(tr.byIdent[r.ident], r)
		}
		tabs[t.name] = tr
		return tr
	}
	taken := got.taken
	var touched []*rowState
	for _, i := range pending {
		e := edits[i]
		if e.ID == "" {
			w.out[i] = decision{missing: true}
			continue
		}
		tc, _ := w.s.tabConfig(e.Tab)
		tr := rowsOf(tc)
		cands := tr.byIdent[e.ID]
		switch len(cands) {
		case 0:
			w.out[i] = decision{missing: true}
			continue
		case 1:
		default:
			nums := make([]string, len(cands))
			for j, r := range cands {
				nums[j] = strconv.FormatInt(r.no+1, 10)
			}
			field := model.FID
			if tc.Role == model.RoleDeadLetter {
				field = model.FKey
			}
			w.out[i] = decision{conflict: &model.Conflict{Edit: e, Row: int(cands[0].no + 1), Field: field, Saw: e.ID,
				Reason: fmt.Sprintf("the same ID is on rows %s (make it unique, then retry)", strings.Join(nums, ", "))}}
			continue
		}
		r := cands[0]
		if len(r.edits) == 0 {
			touched = append(touched, r)
		}
		r.edits = append(r.edits, i)
		w.out[i] = w.decideOn(tc, e, r, taken)
		if r.ident != identity(tc, r.cur) {
			// The edit changed what the row is found by: later edits find it by its new identity.
			old := tr.byIdent[r.ident]
			tr.byIdent[r.ident] = slices.DeleteFunc(slices.Clone(old), func(x *rowState) bool { return x == r })
			r.ident = identity(tc, r.cur)
			tr.byIdent[r.ident] = append(tr.byIdent[r.ident], r)
		}
	}
	var p plan
	for _, r := range touched {
		if len(r.written) > 0 {
			p.rows = append(p.rows, r)
		}
	}
	return p
}

// decideOn decides one edit on its row as the edits before it left it, and applies it there.
// Invariant 3: a key that holds a value is never written, and a key already another row's is
// a conflict.
func (w *writeTx) decideOn(tc model.TabConfig, e model.Edit, r *rowState, taken map[string]any) decision {
	t := r.t
	row := int(r.no + 1)
	conflict := func(c model.Conflict) decision {
		c.Edit, c.Row = e, row
		return decision{conflict: &c}
	}
	for _, f := range sortedFields(e.Expect) {
		want := e.Expect[f]
		now, ok := t.get(r.cur, f)
		if !ok {
			if want != "" {
				return conflict(model.Conflict{Field: f, Saw: want, Reason: fmt.Sprintf("the table has no %s column", f)})
			}
			continue
		}
		if now != want {
			return conflict(model.Conflict{Field: f, Saw: want, Now: now})
		}
	}
	changes := false
	for _, f := range sortedFields(e.Set) {
		cur, ok := t.get(r.cur, f)
		if !ok {
			return conflict(model.Conflict{Field: f, Saw: e.Expect[f], Reason: fmt.Sprintf("the table has no %s column", f)})
		}
		if f == model.FKey && tc.Role == model.RoleDeadLetter {
			if strings.TrimSpace(cur) != "" && cur != e.Set[f] {
				return conflict(model.Conflict{Field: f, Saw: e.Expect[f], Now: cur,
					Reason: fmt.Sprintf("the key cell already holds %q, and a call's key never changes (invariant 3)", cur)})
			}
			if k := e.Set[f]; k != "" && k != cur {
				if owner, ok := taken[k]; ok && owner != r.pk {
					return conflict(model.Conflict{Field: f, Saw: e.Expect[f],
						Reason: fmt.Sprintf("the key %q is already another row's, and a key belongs to one call (invariant 3)", k)})
				}
			}
		}
		if cur != e.Set[f] {
			changes = true
		}
	}
	if !changes {
		return decision{row: row}
	}
	for f := range e.Expect {
		if t.index(f) >= 0 {
			r.checked[f] = true
		}
	}
	if tc.Role == model.RoleDeadLetter {
		// A dead letter's identity columns are checked as read: the write can't land on a
		// row that has since become another call.
		for _, f := range identityFields {
			r.checked[f] = true
		}
	}
	for f, v := range e.Set {
		if f == model.FKey && v != "" {
			taken[v] = r.pk
		}
		r.cur[t.index(f)] = v
		r.written[f] = true
		// A cell written is checked as read too: one another person changed meanwhile (even
		// to the value this edit writes) is decided afresh, as the sheet's write decides it.
		r.checked[f] = true
	}
	audit := map[model.Field]string{model.FTriagedBy: w.actor, model.FTriagedAt: w.now}
	for _, f := range []model.Field{model.FTriagedBy, model.FTriagedAt} {
		if _, explicit := e.Set[f]; !explicit && t.index(f) >= 0 && audit[f] != "" {
			r.cur[t.index(f)] = audit[f]
			r.written[f] = true
		}
	}
	return decision{row: row}
}

// identityFields are the columns a dead letter's effective key is made of: its write checks
// them as read, so it can't land on a row that has since become another call.
var identityFields = []model.Field{model.FKey, model.FSource, model.FURL, model.FPayload, model.FTimestamp}

// shape is the columns a row's write sets and checks: rows of one table and shape are written
// by one statement.
type shape struct {
	table            string
	written, checked string // field names, sorted, joined by ","
}

// write sends one round's writes in one pipelined batch: per table and shape, one statement
// over arrays of the rows' primary keys, new values and values as read, which locks the rows
// still as read (in primary-key order: two writers of the same rows never wait for each other
// in opposite orders) and writes them; the first round that writes also records the Apply's
// token. It returns the edits of the rows that changed between the read and the write, to be
// read and decided again, and marks every other row's edits decided.
func (w *writeTx) write(ctx context.Context, p plan) ([]int, error) {
	if len(p.rows) == 0 {
		return nil, nil
	}
	groups := map[shape][]*rowState{}
	var shapes []shape
	for _, r := range p.rows {
		sh := shape{table: r.t.name, written: joinFields(r.written), checked: joinFields(r.checked)}
		if _, ok := groups[sh]; !ok {
			shapes = append(shapes, sh)
		}
		groups[sh] = append(groups[sh], r)
	}
	slices.SortFunc(shapes, func(a, b shape) int {
		return strings.Compare(a.table+"|"+a.written+"|"+a.checked, b.table+"|"+b.written+"|"+b.checked)
	})
	b := &pgx.Batch{}
	if w.token == "" {
		w.token = newToken()
		// The token's lock is held until the transaction ends: settle waits on it, so it reads
		// the outcome only once the server has committed or aborted (a commit still in
		// flight, or a connection the server hasn't yet seen drop, would otherwise read as
		// not written).
		b.Queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", w.token)
		b.Queue("INSERT INTO triage_writes (token) VALUES ($1)", w.token)
		// Tokens a day old settle nothing any more.
		b.Queue("DELETE FROM triage_writes WHERE at < now() - interval '1 day'")
	}
	tokenStatements := b.Len()
	for _, sh := range shapes {
		q, args := updateStatement(groups[sh])
		b.Queue(q, args...)
	}
	if w.s.beforeWrite != nil {
		w.s.beforeWrite()
	}
	br := w.tx.SendBatch(ctx, b)
	defer br.Close()
	for range tokenStatements {
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	var again []int
	for _, sh := range shapes {
		rows, err := br.Query()
		if err != nil {
			return nil, err
		}
		landed := map[any]bool{}
		for rows.Next() {
			var pk any
			if err := rows.Scan(&pk); err != nil {
				rows.Close()
				return nil, err
			}
			landed[pk] = true
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		for _, r := range groups[sh] {
			if landed[r.pk] {
				w.wrote = true
				continue
			}
			// The row changed between the read and the write: its edits are decided afresh.
			again = append(again, r.edits...)
		}
	}
	slices.Sort(again)
	return again, br.Close()
}

func joinFields(m map[model.Field]bool) string {
	fs := sortedFields(m)
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return strings.Join(s, ",")
}

// updateStatement is the conditional write of rows of one table and shape:
//
//	WITH v AS (SELECT * FROM unnest($1::bigint[], $2::text[], …) AS v(pk, w0, …, c0, …)),
//	     l AS (SELECT t.id FROM failed_calls t JOIN v ON t.id = v.pk
//	           WHERE coalesce(t."key", '') = v.c0 AND … ORDER BY t.id FOR UPDATE OF t)
//	UPDATE failed_calls t SET "status" = v.w0, … FROM v WHERE t.id = v.pk AND t.id IN (SELECT id FROM l)
//	RETURNING t.id
//
// A row another writer changed after the read fails its check (FOR UPDATE reads the row's
// newest version) and is not returned; one deleted meanwhile neither.
func updateStatement(rows []*rowState) (string, []any) {
	t := rows[0].t
	written := sortedFields(rows[0].written)
	checked := sortedFields(rows[0].checked)
	pkType := "text[]"
	if t.role == model.RoleDeadLetter {
		pkType = "bigint[]"
	}
	var arrays, names []string
	args := []any{}
	add := func(name, typ string, v any) {
		args = append(args, v)
		arrays = append(arrays, "$"+strconv.Itoa(len(args))+"::"+typ)
		names = append(names, name)
	}
	if t.role == model.RoleDeadLetter {
		pks := make([]int64, len(rows))
		for i, r := range rows {
			pks[i] = r.pk.(int64)
		}
		add("pk", pkType, pks)
	} else {
		pks := make([]string, len(rows))
		for i, r := range rows {
			pks[i] = r.pk.(string)
		}
		add("pk", pkType, pks)
	}
	var set, where []string
	for j, f := range written {
		vals := make([]*string, len(rows))
		for i, r := range rows {
			v := r.cur[t.index(f)]
			if f == model.FKey && v == "" {
				continue // NULL: no key yet
			}
			v = toDB(v)
			vals[i] = &v
		}
		name := "w" + strconv.Itoa(j)
		add(name, "text[]", vals)
		set = append(set, pgx.Identifier{string(f)}.Sanitize()+" = v."+name)
	}
	for j, f := range checked {
		vals := make([]string, len(rows))
		for i, r := range rows {
			vals[i] = toDB(r.orig[t.index(f)])
		}
		name := "c" + strconv.Itoa(j)
		add(name, "text[]", vals)
		c := "t." + pgx.Identifier{string(f)}.Sanitize()
		if f == model.FKey {
			c = "coalesce(" + c + ", '')"
		}
		where = append(where, c+" = v."+name)
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	q := "WITH v AS (SELECT * FROM unnest(" + strings.Join(arrays, ", ") + ") AS v(" + strings.Join(names, ", ") + ")), " +
		"l AS (SELECT t." + t.pk + " FROM " + t.name + " t JOIN v ON t." + t.pk + " = v.pk" + cond +
		" ORDER BY t." + t.pk + " FOR UPDATE OF t) " +
		"UPDATE " + t.name + " t SET " + strings.Join(set, ", ") + " FROM v WHERE t." + t.pk + " = v.pk AND t." + t.pk +
		" IN (SELECT " + t.pk + " FROM l) RETURNING t." + t.pk
	return q, args
}

func headerStrings(r model.Role) []string {
	cols := model.SchemaFor(r).Columns
	h := make([]string, len(cols))
	for i, c := range cols {
		h[i] = c.Header
	}
	return h
}

func sortedFields[V any](m map[model.Field]V) []model.Field {
	out := make([]model.Field, 0, len(m))
	for f := range m {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// commit commits an Apply's transaction, which recorded token with its first write, and
// settles a lost answer.
func (s *Store) commit(ctx context.Context, op string, tx *lazyTx, token string, res model.ApplyResult) (model.ApplyResult, error) {
	err := tx.commit(ctx)
	if err == nil {
		return res, nil
	}
	done, serr := s.settle(ctx, token)
	switch {
	case serr != nil:
		return model.ApplyResult{}, fmt.Errorf("%s to %s: the commit's answer was lost (%w) and whether it landed can't be read now (%v): load again and check before retrying (%w)", op, s.url, err, serr, model.ErrMayHaveLanded)
	case !done:
		return model.ApplyResult{}, fmt.Errorf("%s to %s: %w; nothing was written (checked)", op, s.url, err)
	}
	return res, nil
}

// settle reads, on a new connection, whether an Apply's transaction committed.
func (s *Store) settle(ctx context.Context, token string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read only
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", token); err != nil {
		return false, err
	}
	var n int
	err = tx.QueryRow(ctx, "SELECT count(*) FROM triage_writes WHERE token = $1", token).Scan(&n)
	return n > 0, err
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}
