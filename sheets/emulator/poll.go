package emulator

import "time"

// Poll calls cond until it reports true or timeout passes, and says whether it held. It is
// the one wait loop for tests that watch something happen in another goroutine or process
// (a server stopping, a program's screen, a receiver's log): the first check is immediate,
// then the pause between checks grows from 1ms to 20ms, so a fast condition costs ~nothing
// and a slow one doesn't spin.
//
//	if !emulator.Poll(10*time.Second, func() bool { return rcv.InFlight() >= 2 }) {
//		t.Fatal("the calls never arrived")
//	}
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for !cond() {
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(min(pause, max(time.Until(deadline), 0)))
		pause = min(2*pause, 20*time.Millisecond)
	}
	return true
}
