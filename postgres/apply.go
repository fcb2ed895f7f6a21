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
	"github.com/triage-dev/triage/model"
)

// maxTries bounds how often one edit is located again when its row changed between the read
// and the conditional write; past it the edit is a conflict ("kept changing").
const maxTries = 3

// Apply writes edits by row identity, with the answers the sheets store gives (invariant 1):
// each edit's row is found by its identity (the ID, or a dead letter's effective key) and
// written with one conditional UPDATE … WHERE the row's key AND every cell the edit expected
// still holds what the person saw (and, for a dead letter, its identity columns as read), so
// a write never lands on another row and a changed cell is an exact conflict. An edit whose
// ID is gone is in Missing; one whose cell changed, whose ID is on two rows or which sets a
// field the table lacks is in Conflicts; every other edit is in Applied. Only cells whose
// value changes are written; an edit that changes nothing is applied with nothing written and
// no audit stamp. A key that holds a value is never changed (invariant 3).
//
// The edits of one call are one transaction, applied in order (a later edit sees an earlier
// one's values), and the transaction records a token: a commit whose answer is lost is
// settled by looking the token up on a new connection, so Apply reports it written only when
// it was, and an error only when it was not (or, if even that can't be read, says so).
func (s *Store) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	op := fmt.Sprintf("write %d edit", len(edits))
	if len(edits) != 1 {
		op += "s"
	}
	if s.readOnly {
		return model.ApplyResult{}, fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	if len(edits) == 0 {
		return model.ApplyResult{}, nil
	}
	for _, e := range edits {
		if _, ok := s.tabConfig(e.Tab); !ok {
			return model.ApplyResult{}, fmt.Errorf("%s: tab %q is not a configured tab (configured: %s); nothing was written", op, e.Tab, s.tabNames())
		}
	}
	actor := s.actor
	if a := model.ActorFrom(ctx); a != "" {
		actor = a
	}
	now := s.stamp()
	for try := 1; ; try++ {
		res, err := s.applyTx(ctx, op, edits, actor, now)
		var pgErr *pgconn.PgError
		if try < maxTxTries && errors.As(err, &pgErr) && pgErr.Code == "40P01" {
			// A deadlock with another writer (their rows locked in the other order): the
			// server rolled ours back whole, so it is run again from the start, after a
			// pause: run again at once, ours could take the first row back before the other
			// writer, woken by our rollback, gets it, and the same deadlock comes round again.
			if err := model.Sleep(ctx, deadlockPause(try)); err != nil {
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

// applyTx is one attempt at an Apply's transaction.
func (s *Store) applyTx(ctx context.Context, op string, edits []model.Edit, actor, now string) (model.ApplyResult, error) {
	w := &writeTx{s: s, actor: actor, now: now}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return model.ApplyResult{}, fmt.Errorf("%s to %s: %w; nothing was written", op, s.url, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after a commit it is a no-op
	w.tx = tx
	var res model.ApplyResult
	for _, e := range edits {
		if err := w.apply(ctx, e, &res); err != nil {
			return model.ApplyResult{}, fmt.Errorf("%s to %s: %w; nothing was written", op, s.url, err)
		}
	}
	if !w.wrote {
		return res, nil
	}
	return s.commit(ctx, op, tx, res)
}

// commit commits an Apply's transaction with its token, and settles a lost answer.
func (s *Store) commit(ctx context.Context, op string, tx pgx.Tx, res model.ApplyResult) (model.ApplyResult, error) {
	token := newToken()
	// The token's lock is held until the transaction ends: settle waits on it, so it reads the
	// outcome only once the server has committed or aborted (a commit still in flight, or a
	// connection the server hasn't yet seen drop, would otherwise read as not written).
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", token); err != nil {
		return model.ApplyResult{}, fmt.Errorf("%s to %s: %w; nothing was written", op, s.url, err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO triage_writes (token) VALUES ($1)", token); err != nil {
		return model.ApplyResult{}, fmt.Errorf("%s to %s: %w; nothing was written", op, s.url, err)
	}
	// Tokens a day old settle nothing any more.
	if _, err := tx.Exec(ctx, "DELETE FROM triage_writes WHERE at < now() - interval '1 day'"); err != nil {
		return model.ApplyResult{}, fmt.Errorf("%s to %s: %w; nothing was written", op, s.url, err)
	}
	err := tx.Commit(ctx)
	if err == nil {
		return res, nil
	}
	done, serr := s.settle(ctx, token)
	switch {
	case serr != nil:
		return model.ApplyResult{}, fmt.Errorf("%s to %s: the commit's answer was lost (%w) and whether it landed can't be read now (%v): load again and check before retrying", op, s.url, err, serr)
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

// writeTx is one Apply's transaction.
type writeTx struct {
	s     *Store
	tx    pgx.Tx
	actor string
	now   string
	wrote bool
}

// found is a row as read: its primary key, number and cells in schema order.
type found struct {
	pk    any
	no    int64
	cells []string
}

func (t table) index(f model.Field) int { return slices.Index(t.fields, f) }

func (t table) get(r found, f model.Field) (string, bool) {
	i := t.index(f)
	if i < 0 {
		return "", false
	}
	return r.cells[i], true
}

// apply decides one edit and records it in res; an error is a failed statement.
func (w *writeTx) apply(ctx context.Context, e model.Edit, res *model.ApplyResult) error {
	tc, _ := w.s.tabConfig(e.Tab)
	t := tables[tc.Role]
	if e.ID == "" {
		res.Missing = append(res.Missing, e)
		return nil
	}
	for try := 0; try < maxTries; try++ {
		rows, err := w.locate(ctx, tc, t, e.ID)
		if err != nil {
			return err
		}
		switch len(rows) {
		case 0:
			res.Missing = append(res.Missing, e)
			return nil
		case 1:
		default:
			nums := make([]string, len(rows))
			for i, r := range rows {
				nums[i] = strconv.FormatInt(r.no+1, 10)
			}
			field := model.FID
			if tc.Role == model.RoleDeadLetter {
				field = model.FKey
			}
			res.Conflicts = append(res.Conflicts, model.Conflict{Edit: e, Row: int(rows[0].no + 1), Field: field, Saw: e.ID,
				Reason: fmt.Sprintf("the same ID is on rows %s (make it unique, then retry)", strings.Join(nums, ", "))})
			return nil
		}
		r := rows[0]
		row := int(r.no + 1)
		if c := expectConflict(t, e, r); c != nil {
			res.Conflicts = append(res.Conflicts, *c)
			return nil
		}
		changes, c := setConflict(tc, t, e, r)
		if c != nil {
			res.Conflicts = append(res.Conflicts, *c)
			return nil
		}
		if !changes {
			res.Applied = append(res.Applied, model.Applied{Edit: e, Row: row})
			return nil
		}
		ok, c, err := w.update(ctx, tc, t, e, r)
		if err != nil {
			return err
		}
		if c != nil {
			res.Conflicts = append(res.Conflicts, *c)
			return nil
		}
		if ok {
			w.wrote = true
			res.Applied = append(res.Applied, model.Applied{Edit: e, Row: row})
			return nil
		}
		// The row changed between the read and the write: read it again and decide afresh.
	}
	res.Conflicts = append(res.Conflicts, model.Conflict{Edit: e, Field: model.FStatus,
		Reason: "the row kept changing while triage wrote it (refresh and retry)", Undecided: true})
	return nil
}

// locate reads the rows whose identity is id: by primary key, or for a dead letter by its
// effective key (the key cell trimmed; a row without a key by the key its content gives,
// model.RowIdentity, as the sheets store finds it).
func (w *writeTx) locate(ctx context.Context, tc model.TabConfig, t table, id string) ([]found, error) {
	q := "SELECT " + t.pk + ", " + t.selectList() + " FROM " + t.name + " WHERE "
	if tc.Role != model.RoleDeadLetter {
		q += "id = $1"
	} else {
		q += `btrim("key") = $1 OR "key" IS NULL OR btrim("key") = ''`
	}
	rows, err := w.tx.Query(ctx, q+" ORDER BY "+t.rowNo, toDB(id))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []found
	dtc := decodeConfig(tc)
	hm, _ := model.MapHeaders(dtc, headerStrings(tc.Role))
	for rows.Next() {
		var pk any
		var no int64
		cells := make([]string, len(t.fields))
		dest := []any{&pk, &no}
		for i := range cells {
			dest = append(dest, &cells[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		for i := range cells {
			cells[i] = fromDB(cells[i])
		}
		if tc.Role == model.RoleDeadLetter && model.RowIdentity(dtc, hm, cells) != id {
			continue
		}
		out = append(out, found{pk: pk, no: no, cells: cells})
	}
	return out, rows.Err()
}

func headerStrings(r model.Role) []string {
	cols := model.SchemaFor(r).Columns
	h := make([]string, len(cols))
	for i, c := range cols {
		h[i] = c.Header
	}
	return h
}

// expectConflict checks an edit's Expect against its row as read.
func expectConflict(t table, e model.Edit, r found) *model.Conflict {
	row := int(r.no + 1)
	for _, f := range sortedFields(e.Expect) {
		want := e.Expect[f]
		now, ok := t.get(r, f)
		if !ok {
			if want != "" {
				return &model.Conflict{Edit: e, Row: row, Field: f, Saw: want, Reason: fmt.Sprintf("the table has no %s column", f)}
			}
			continue
		}
		if now != want {
			return &model.Conflict{Edit: e, Row: row, Field: f, Saw: want, Now: now}
		}
	}
	return nil
}

// setConflict checks that an edit's Set can be written, and says whether it changes anything.
// Invariant 3: a key that holds a value is never written.
func setConflict(tc model.TabConfig, t table, e model.Edit, r found) (bool, *model.Conflict) {
	row := int(r.no + 1)
	changes := false
	for _, f := range sortedFields(e.Set) {
		cur, ok := t.get(r, f)
		if !ok {
			return false, &model.Conflict{Edit: e, Row: row, Field: f, Saw: e.Expect[f], Reason: fmt.Sprintf("the table has no %s column", f)}
		}
		if f == model.FKey && tc.Role == model.RoleDeadLetter && strings.TrimSpace(cur) != "" && cur != e.Set[f] {
			return false, &model.Conflict{Edit: e, Row: row, Field: f, Saw: e.Expect[f], Now: cur,
				Reason: fmt.Sprintf("the key cell already holds %q, and a call's key never changes (invariant 3)", cur)}
		}
		if cur != e.Set[f] {
			changes = true
		}
	}
	return changes, nil
}

// identityFields are the columns a dead letter's effective key is made of: its write checks
// them as read, so it can't land on a row that has since become another call.
var identityFields = []model.Field{model.FKey, model.FSource, model.FURL, model.FPayload, model.FTimestamp}

// update is the conditional write of one edit: it reports whether the row still was as read
// (ok), or a conflict the write itself found (the key already on another row).
func (w *writeTx) update(ctx context.Context, tc model.TabConfig, t table, e model.Edit, r found) (bool, *model.Conflict, error) {
	var set, where []string
	args := []any{r.pk}
	arg := func(v any) string {
		args = append(args, dbArg(v))
		return "$" + strconv.Itoa(len(args))
	}
	value := func(f model.Field, v string) any {
		if f == model.FKey && v == "" {
			return nil
		}
		return v
	}
	for _, f := range sortedFields(e.Set) {
		set = append(set, pgx.Identifier{string(f)}.Sanitize()+" = "+arg(value(f, e.Set[f])))
	}
	audit := map[model.Field]string{model.FTriagedBy: w.actor, model.FTriagedAt: w.now}
	for _, f := range []model.Field{model.FTriagedBy, model.FTriagedAt} {
		if _, explicit := e.Set[f]; !explicit && t.index(f) >= 0 && audit[f] != "" {
			set = append(set, pgx.Identifier{string(f)}.Sanitize()+" = "+arg(audit[f]))
		}
	}
	checked := map[model.Field]string{}
	for f, v := range e.Expect {
		if t.index(f) >= 0 {
			checked[f] = v
		}
	}
	if tc.Role == model.RoleDeadLetter {
		for _, f := range identityFields {
			checked[f], _ = t.get(r, f)
		}
	}
	for _, f := range sortedFields(checked) {
		where = append(where, col(f)+" = "+arg(checked[f]))
	}
	q := "UPDATE " + t.name + " SET " + strings.Join(set, ", ") + " WHERE " + t.pk + " = $1"
	if len(where) > 0 {
		q += " AND " + strings.Join(where, " AND ")
	}
	_, setsKey := e.Set[model.FKey]
	var sp pgx.Tx
	if setsKey {
		// A key already on another row fails the statement; the savepoint keeps the rest.
		var err error
		if sp, err = w.tx.Begin(ctx); err != nil {
			return false, nil, err
		}
	}
	if w.s.beforeWrite != nil {
		w.s.beforeWrite()
	}
	tag, err := w.tx.Exec(ctx, q, args...)
	var pgErr *pgconn.PgError
	if setsKey && errors.As(err, &pgErr) && pgErr.Code == "23505" {
		if rerr := sp.Rollback(ctx); rerr != nil {
			return false, nil, rerr
		}
		return false, &model.Conflict{Edit: e, Row: int(r.no + 1), Field: model.FKey, Saw: e.Expect[model.FKey],
			Reason: fmt.Sprintf("the key %q is already another row's, and a key belongs to one call (invariant 3)", e.Set[model.FKey])}, nil
	}
	if err != nil {
		return false, nil, err
	}
	if setsKey {
		if err := sp.Commit(ctx); err != nil {
			return false, nil, err
		}
	}
	return tag.RowsAffected() == 1, nil, nil
}

func sortedFields[V any](m map[model.Field]V) []model.Field {
	out := make([]model.Field, 0, len(m))
	for f := range m {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}
