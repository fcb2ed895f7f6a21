package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildInfo is what the binary knows about its own build: the module version (a tag when
// installed with `go install ...@v1.2.3`, "(devel)" when built from a checkout) and, when
// the build recorded them, the VCS revision and commit time.
type buildInfo struct {
	Version, Revision, Time, GoVersion string
	Modified                           bool
}

func readBuildInfo() buildInfo {
	bi := buildInfo{Version: "(devel)", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return bi
	}
	if v := info.Main.Version; v != "" {
		bi.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			bi.Revision = s.Value
		case "vcs.time":
			bi.Time = s.Value
		case "vcs.modified":
			bi.Modified = s.Value == "true"
		}
	}
	return bi
}

func (bi buildInfo) String() string {
	s := "triage " + bi.Version
	if bi.Revision != "" {
		s += "\ncommit:     " + bi.Revision
		if bi.Modified {
			s += " (modified)"
		}
	}
	if bi.Time != "" {
		s += "\ndate:       " + bi.Time
	}
	return s + "\ngo:         " + bi.GoVersion
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Long: `Print triage's version (the module version it was installed at), the VCS commit it
was built from and that commit's time, as recorded in the binary's build info.`,
		Example: `  triage version
  triage --version`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(e.stdout, readBuildInfo())
			return nil
		},
	}
}
