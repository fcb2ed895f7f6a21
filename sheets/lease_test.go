package sheets

import (
	"os/exec"
	"testing"
)

// A writer is proven gone only on this host, in this boot and PID namespace, with no
// process of its PID; anything else is left to its lease.
func TestWriterGone(t *testing.T) {
	me := thisProcess()
	if me.Host == "" || me.Boot == "" || me.NS == "" {
		t.Skip("this host can't tell a process gone (no hostname, boot ID or PID namespace): only leases apply")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("can't run a child process: %v", err)
	}
	exited := cmd.Process.Pid
	for _, tc := range []struct {
		name string
		w    func(w writerID) writerID
		gone bool
	}{
		{"an exited process of this host", func(w writerID) writerID { w.PID = exited; return w }, true},
		{"this very process", func(w writerID) writerID { return w }, false},
		{"another host", func(w writerID) writerID { w.PID, w.Host = exited, w.Host+"-other"; return w }, false},
		{"another container on this host", func(w writerID) writerID { w.PID, w.NS = exited, "pid:[1]"; return w }, false},
		{"a writer that named no namespace", func(w writerID) writerID { w.PID, w.NS = exited, ""; return w }, false},
		{"an earlier boot of this host", func(w writerID) writerID { w.PID, w.Boot = 1, "an-earlier-boot"; return w }, true},
	} {
		if got := tc.w(me).gone(); got != tc.gone {
			t.Errorf("%s: gone() = %v, want %v", tc.name, got, tc.gone)
		}
	}
}
