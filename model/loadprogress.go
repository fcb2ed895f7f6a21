package model

import "context"

// LoadProgressFunc is told, while a store reads a tab, how many of its rows have been decoded
// and about how many there are (total 0: not known). It runs on the loading goroutine, so it
// must be quick and must not block: a UI sends itself a message and returns.
type LoadProgressFunc func(tab string, rows, total int)

type loadProgressKey struct{}

// WithLoadProgress returns a context under which a store's Load reports its progress to f.
// A context carries it so that every store (the sheet, PostgreSQL) reports without a method
// of its own, and a caller that doesn't ask pays nothing.
func WithLoadProgress(ctx context.Context, f LoadProgressFunc) context.Context {
	return context.WithValue(ctx, loadProgressKey{}, f)
}

// ReportLoadProgress tells the context's LoadProgressFunc, if any, how far a load is.
func ReportLoadProgress(ctx context.Context, tab string, rows, total int) {
	if f, ok := ctx.Value(loadProgressKey{}).(LoadProgressFunc); ok && f != nil {
		f(tab, rows, total)
	}
}
