package model

import "context"

type actorKey struct{}

// WithActor returns a context under which a store's Apply records name in triaged_by instead
// of the store's own actor: one store shared by many people (`triage serve`) records each
// write's own person. Every store (the sheet, PostgreSQL) reads it with ActorFrom, so serve
// says who is writing once, whatever the store. An empty name leaves the store's own.
func WithActor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, actorKey{}, name)
}

// ActorFrom is the person WithActor put in ctx ("" when none).
func ActorFrom(ctx context.Context) string {
	a, _ := ctx.Value(actorKey{}).(string)
	return a
}
