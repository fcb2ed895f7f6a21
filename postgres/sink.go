package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/triage-dev/triage/model"
)

// DeadLetter records calls that were not delivered (replay.DeadLetterSink), each a
// failed_calls row with status dead, in one statement: INSERT … ON CONFLICT (key) DO NOTHING,
// so a letter whose key is already recorded (a producer that handed it over again after a
// lost answer) is not recorded twice, and the first row keeps its state. A letter without a
// key gets one minted by the replay that first sends it (invariant 3). Letters a sheet cell
// could not hold are refused whole, as the sheets store refuses them (model.CheckDeadLetter),
// so the two stores accept the same calls.
func (s *Store) DeadLetter(ctx context.Context, letters []model.DeadLetter) error {
	op := fmt.Sprintf("dead-letter %d call", len(letters))
	if len(letters) != 1 {
		op += "s"
	}
	if len(letters) == 0 {
		return nil
	}
	if s.readOnly {
		return fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	if err := model.CheckDeadLetters(letters); err != nil {
		return fmt.Errorf("%s: nothing recorded: %w", op, err)
	}
	dead := model.StatusDead
	for _, tc := range s.tabs {
		if tc.Role == model.RoleDeadLetter {
			dead = (&model.Table{Statuses: tc.Statuses}).StatusValue(model.StatusDead)
		}
	}
	// One statement over arrays, whatever the number of letters: a VALUES list would take 9
	// parameters a letter and meet the protocol's 65,535 at 7,282 letters.
	cols := []string{`"timestamp"`, "source", "url", "payload", "error", "attempts", "method", `"key"`, "status"}
	arrays := make([][]*string, len(cols))
	for c := range arrays {
		arrays[c] = make([]*string, len(letters))
	}
	for i, l := range letters {
		ts := ""
		if !l.Timestamp.IsZero() {
			ts = model.FormatTime(l.Timestamp)
		}
		row := []string{ts, l.Source, l.URL, l.Payload, l.Error, strconv.Itoa(l.Attempts), l.Method, l.Key, dead}
		for c, v := range row {
			if c == 7 && v == "" {
				continue // NULL: no key yet
			}
			v = toDB(v)
			arrays[c][i] = &v
		}
	}
	ph := make([]string, len(cols))
	args := make([]any, len(cols))
	for c := range cols {
		ph[c] = "$" + strconv.Itoa(c+1) + "::text[]"
		args[c] = arrays[c]
	}
	// WITH ORDINALITY keeps the letters' order in the table's row order (their ids).
	q := "INSERT INTO failed_calls (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(cols, ", ") +
		" FROM unnest(" + strings.Join(ph, ", ") + ") WITH ORDINALITY AS v(" + strings.Join(cols, ", ") + ", n) ORDER BY n" +
		` ON CONFLICT ("key") DO NOTHING`
	// A lost answer: the statement is one transaction, so retrying it records nothing twice
	// (the keys conflict); a letter without a key may then be recorded twice, which a replay
	// refuses as a duplicate (rows sharing a minted key), naming both.
	if _, err := s.pool.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("%s to %s: %w; none recorded (hand them over again: recorded keys are not recorded twice)", op, s.url, err)
	}
	return nil
}
