package sheets

import "time"

// SetWriterPID makes a store name another process as its journal entries' writer: a test
// that wants a writer provably gone names a process that has exited.
func SetWriterPID(s *Store, pid int) { s.writer.PID = pid }

// SetLocalClock sets the host clock a store measures Google's time from, so that a test can
// let a lease run out while a write waits.
func SetLocalClock(s *Store, now func() time.Time) {
	s.gclock.mu.Lock()
	defer s.gclock.mu.Unlock()
	s.gclock.local = now
}

// The bounds of an Apply's rounds, for the tests that count them.
const (
	MaxWriteRounds   = maxWriteRounds
	MaxRestoreRounds = maxRestoreRounds
	MaxStuckRounds   = maxStuckRounds
	MaxRestorePause  = maxRestorePause
)
