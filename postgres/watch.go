package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/model"
)

// channel is the NOTIFY channel of the tables' change trigger (migration 00002).
const channel = "triage_changes"

// Change is a notice that a tab's table changed (one per changing statement of any client):
// load again to see what.
type Change struct {
	// Role is the tab whose table changed.
	Role model.Role
}

var roleOfTable = map[string]model.Role{"inbox": model.RoleInbox, "failed_calls": model.RoleDeadLetter, "jobs": model.RoleQueue}

// Watch delivers a Change for every statement that changes a triage table, from any client,
// as PostgreSQL delivers the trigger's NOTIFY: live, not polled, and an idle watcher sends no
// queries. It holds one connection of its own, LISTENing, until ctx ends; then, or when the
// connection is lost, the channel is closed (watch again, and load again: changes made while
// no one listened are not replayed). Notices are not dropped: a slow reader holds the
// connection's queue, which PostgreSQL buffers.
func (s *Store) Watch(ctx context.Context) (<-chan Change, error) {
	conn, err := pgx.ConnectConfig(ctx, s.cfg.ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("watch %s: connect: %w", s.url, err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("watch %s: listen: %w", s.url, err)
	}
	out := make(chan Change)
	go func() {
		defer close(out)
		defer conn.Close(context.WithoutCancel(ctx))
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			select {
			case out <- Change{Role: roleOfTable[n.Payload]}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
