package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/triage-dev/triage/config"
)

// The files the package installs beside the binary (packaging/): the sample config passes
// `triage config check` as it is; the systemd unit passes `systemd-analyze verify` (where
// systemd is, with the binary's path pointing at a program that exists here), never needs its
// environment file (EnvironmentFile=-), and is the unit the README shows.
func TestPackagingFiles(t *testing.T) {
	probs, err := config.Check(filepath.Join("packaging", "etc", "config.toml"))
	if err != nil || len(probs) != 0 {
		t.Errorf("the sample config: %v %v", err, probs)
	}
	unit, err := os.ReadFile(filepath.Join("packaging", "systemd", "triage.service"))
	if err != nil {
		t.Fatal(err)
	}
	u := string(unit)
	for _, want := range []string{"EnvironmentFile=-/etc/triage/env", "ExecStart=/usr/bin/triage serve", "User=triage", "StateDirectory=triage"} {
		if !strings.Contains(u, want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	body := u[strings.Index(u, "[Unit]"):]
	if !strings.Contains(string(readme), body) {
		t.Error("the README's unit is not packaging/systemd/triage.service: show the file as it is")
	}
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze here")
	}
	dir := t.TempDir()
	local := strings.ReplaceAll(u, "/usr/bin/triage", "/bin/true")
	var kept []string
	for _, l := range strings.Split(local, "\n") {
		if !strings.HasPrefix(l, "Documentation=") { // man triage(1) is installed with the package
			kept = append(kept, l)
		}
	}
	p := filepath.Join(dir, "triage.service")
	if err := os.WriteFile(p, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(sa, "verify", p).CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
