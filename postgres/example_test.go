package postgres_test

import (
	"context"
	"log"
	"os"

	"github.com/triage-dev/triage/postgres"
)

// A worker's loop: take every pending job, one at a time, each recorded done or error as the
// work says. Run as many such workers as you like, anywhere: no two get the same job.
func ExampleStore_WorkAll() {
	ctx := context.Background()
	st, err := postgres.Open(ctx, os.Getenv("TRIAGE_DATABASE_URL"), postgres.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	host, _ := os.Hostname()
	n, err := st.WorkAll(ctx, host, func(ctx context.Context, job postgres.Job) error {
		log.Printf("running %s (%s), attempt %d", job.ID, job.Type, job.Attempts)
		return nil // an error here is recorded in the job's row: status error, its text in lastError
	})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("ran %d jobs", n)
}
