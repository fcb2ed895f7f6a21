package postgres

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// Replay leases (model.Leases) on the database are rows of replay_leases (migration 5), one
// per key, taken by one INSERT … ON CONFLICT DO UPDATE … WHERE the lease is free, so that of
// two runs inserting the same key at once the second waits for the first's commit and then
// finds it taken. A run holds a session advisory lock on its own number for as long as it
// runs, on a connection of its own: a lease whose run's lock can be taken belongs to a run
// whose connection is gone (killed, its host rebooted), and is taken over at once; one that
// is past its until (the run stopped renewing) is taken over too.

// runConns are the runs this store holds, by token: the connection holding each run's lock.
type runConns struct {
	mu   sync.Mutex
	runs map[string]*heldRun
}

type heldRun struct {
	conn *pgxpool.Conn
	lock int64
}

// holderName is who a lease says holds it: the store's actor, and the host when the actor
// doesn't name one.
func (s *Store) holderName() string {
	who := s.actor
	if who == "" {
		who = "triage"
	}
	if !strings.Contains(who, "@") {
		if h, err := os.Hostname(); err == nil && h != "" {
			who += "@" + h
		}
	}
	return who
}

// Lease leases keys of tab (a dead-letter tab) to a new run: see replay.Leaser.
func (s *Store) Lease(ctx context.Context, tab string, keys []string) (model.Leases, error) {
	op := fmt.Sprintf("lease %s for a replay", words.Count(len(keys), "row", "rows"))
	if s.readOnly {
		return model.Leases{}, fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	tc, ok := s.tabConfig(tab)
	if !ok || tc.Role != model.RoleDeadLetter {
		return model.Leases{}, fmt.Errorf("%s: %q is not the dead-letter tab of %s", op, tab, s.url)
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	run := hex.EncodeToString(b[:8])
	lock := int64(binary.BigEndian.Uint64(b[8:]))
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return model.Leases{}, fmt.Errorf("%s: %s: %w", op, s.url, err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lock); err != nil {
		conn.Release()
		return model.Leases{}, fmt.Errorf("%s: %s: %w", op, s.url, err)
	}
	res, err := s.lease(ctx, tc.Name, keys, run, lock)
	if err != nil || len(res.Taken) == 0 {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock)
		conn.Release()
		if err != nil {
			return model.Leases{}, fmt.Errorf("%s: %s: %w", op, s.url, err)
		}
		return res, nil
	}
	s.runs.mu.Lock()
	if s.runs.runs == nil {
		s.runs.runs = map[string]*heldRun{}
	}
	s.runs.runs[run] = &heldRun{conn: conn, lock: lock}
	s.runs.mu.Unlock()
	return res, nil
}

// lease frees the leases of gone runs among keys, then takes every free one, in one
// transaction.
func (s *Store) lease(ctx context.Context, tab string, keys []string, run string, lock int64) (model.Leases, error) {
	res := model.Leases{Run: run, Tab: tab, Held: map[string]model.LeaseHolder{}, Unleased: map[string]string{}}
	keys = dedupe(keys)
	for i := range keys {
		keys[i] = toDB(keys[i]) // a key is a cell: it may hold a NUL (see cell.go)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return res, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// The runs holding these keys whose connection is gone: their lock is free.
	rows, err := tx.Query(ctx, `SELECT DISTINCT run, lock FROM replay_leases WHERE key = ANY($1) AND until >= now()`, keys)
	if err != nil {
		return res, err
	}
	type other struct {
		run  string
		lock int64
	}
	var others []other
	for rows.Next() {
		var o other
		if err := rows.Scan(&o.run, &o.lock); err != nil {
			rows.Close()
			return res, err
		}
		others = append(others, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, err
	}
	for _, o := range others {
		var free bool
		// The transaction-level lock is released at commit; a live run holds its session lock.
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, o.lock).Scan(&free); err != nil {
			return res, err
		}
		if free {
			if _, err := tx.Exec(ctx, `DELETE FROM replay_leases WHERE run = $1`, o.run); err != nil {
				return res, err
			}
		}
	}
	rows, err = tx.Query(ctx, `
INSERT INTO replay_leases (key, run, lock, holder, since, until)
SELECT k, $2, $3, $4, now(), now() + $5 * interval '1 second' FROM unnest($1::text[]) AS k
ON CONFLICT (key) DO UPDATE SET run = EXCLUDED.run, lock = EXCLUDED.lock, holder = EXCLUDED.holder,
    since = EXCLUDED.since, until = EXCLUDED.until
    WHERE replay_leases.until < now() OR replay_leases.run = EXCLUDED.run
RETURNING key`, keys, run, lock, s.holderName(), model.LeaseFor.Seconds())
	if err != nil {
		return res, err
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return res, err
		}
		res.Taken = append(res.Taken, fromDB(k))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, err
	}
	rows, err = tx.Query(ctx, `SELECT key, holder, since, until FROM replay_leases WHERE key = ANY($1) AND run <> $2`, keys, run)
	if err != nil {
		return res, err
	}
	for rows.Next() {
		var k string
		var h model.LeaseHolder
		if err := rows.Scan(&k, &h.By, &h.Since, &h.Until); err != nil {
			rows.Close()
			return res, err
		}
		res.Held[fromDB(k)] = h
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, err
	}
	return res, tx.Commit(ctx)
}

func dedupe(keys []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// Renew moves the run's leases on by model.LeaseFor.
func (s *Store) Renew(ctx context.Context, l model.Leases) error {
	if s.heldRun(l.Run, false) == nil {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `UPDATE replay_leases SET until = now() + $2 * interval '1 second' WHERE run = $1`, l.Run, model.LeaseFor.Seconds()); err != nil {
		return fmt.Errorf("renew the replay's leases: %s: %w", s.url, err)
	}
	return nil
}

// Release deletes the run's leases, then frees its lock and connection.
func (s *Store) Release(ctx context.Context, l model.Leases) error {
	h := s.heldRun(l.Run, true)
	if h == nil {
		return nil
	}
	defer h.conn.Release()
	if _, err := h.conn.Exec(ctx, `DELETE FROM replay_leases WHERE run = $1`, l.Run); err != nil {
		return fmt.Errorf("release the replay's leases: %s: %w", s.url, err)
	}
	if _, err := h.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, h.lock); err != nil {
		return fmt.Errorf("release the replay's lock: %s: %w", s.url, err)
	}
	return nil
}

func (s *Store) heldRun(run string, take bool) *heldRun {
	s.runs.mu.Lock()
	defer s.runs.mu.Unlock()
	h := s.runs.runs[run]
	if take {
		delete(s.runs.runs, run)
	}
	return h
}

// releaseAll releases every run still held (Close): best effort, within a few seconds; a
// lease left behind frees itself when its connection closes (its lock) or runs out.
func (s *Store) releaseAll() {
	s.runs.mu.Lock()
	runs := s.runs.runs
	s.runs.runs = nil
	s.runs.mu.Unlock()
	for run, h := range runs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = h.conn.Exec(ctx, `DELETE FROM replay_leases WHERE run = $1`, run)
		_, _ = h.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, h.lock)
		cancel()
		h.conn.Release()
	}
}
