package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/triage-dev/triage/config"
)

// The files the package installs beside the binary (packaging/): the sample config passes
// `triage config check` as it is; the systemd unit passes `systemd-analyze verify` (where
// systemd is, with the binary's path pointing at a program that exists here), never needs its
// environment file (EnvironmentFile=-), and is the unit docs/SERVE.md (the operator's guide
// the README links to) shows.
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
	guide, err := os.ReadFile(filepath.Join("docs", "SERVE.md"))
	if err != nil {
		t.Fatal(err)
	}
	body := u[strings.Index(u, "[Unit]"):]
	if !strings.Contains(string(guide), body) {
		t.Error("docs/SERVE.md's unit is not packaging/systemd/triage.service: show the file as it is")
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

// The README's Installing section names the package's paths, as the package lays them out
// (packaging/deb-contents.txt, which packaging/check holds the built .deb to): a path it names
// that the package doesn't install would send an operator looking for nothing. The one
// exception is the key file the operator puts there.
func TestReadmeInstallPathsAreThePackages(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	r := string(readme)
	start := strings.Index(r, "## Installing")
	end := strings.Index(r[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("the README has no Installing section")
	}
	section := r[start : start+1+end]
	contents, err := os.ReadFile(filepath.Join("packaging", "deb-contents.txt"))
	if err != nil {
		t.Fatal(err)
	}
	installed := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(contents)), "\n") {
		f := strings.Fields(l)
		installed[strings.TrimSuffix(f[len(f)-1], "/")] = true
	}
	named := regexp.MustCompile("(/(?:usr|etc|var)/[A-Za-z0-9._/-]*[A-Za-z0-9])").FindAllString(section, -1)
	if len(named) < 5 {
		t.Fatalf("the Installing section names %d paths: %q", len(named), named)
	}
	made := map[string]bool{
		"/etc/triage/service-account.json": true, // the operator's key
		"/var/lib/triage":                  true, // made by the tmpfiles entry at install
	}
	for _, p := range named {
		if !installed[p] && !made[p] {
			t.Errorf("the README's Installing section names %s, which the package does not install", p)
		}
	}
}
