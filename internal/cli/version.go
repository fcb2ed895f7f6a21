package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// What a release build stamps into the binary at link time (README, "Building a release"):
//
//	go build -ldflags "-X github.com/triage-dev/triage/internal/cli.version=v1.2.3
//	  -X github.com/triage-dev/triage/internal/cli.commit=$(git rev-parse HEAD)
//	  -X github.com/triage-dev/triage/internal/cli.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" .
//
// Each one set wins over what the Go toolchain recorded (the module version, and the VCS
// revision and time, which a build with -buildvcs=false or outside a checkout lacks).
var (
	version string
	commit  string
	date    string
)

// develVersion is the module version of a binary built from a checkout without a version.
const develVersion = "(devel)"

// buildInfo is what the binary knows about its own build: the version (set at link time, else
// a tag when installed with `go install ...@v1.2.3`, a pseudo-version for a build from a git
// checkout, "(devel)" when nothing says), the commit and its time (set at link time, else the
// VCS revision and commit time the toolchain recorded, if it did).
type buildInfo struct {
	Version, Revision, Time, GoVersion string
	Modified                           bool
}

func readBuildInfo() buildInfo {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return buildInfoFrom(info, version, commit, date)
}

// buildInfoFrom combines the toolchain's build info (nil when the binary has none) with the
// values set at link time, which win.
func buildInfoFrom(info *debug.BuildInfo, linkVersion, linkCommit, linkDate string) buildInfo {
	bi := buildInfo{Version: develVersion, GoVersion: runtime.Version()}
	if info != nil {
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
	}
	if linkVersion != "" {
		bi.Version = linkVersion
	}
	if linkCommit != "" {
		bi.Revision, bi.Modified = linkCommit, false
	}
	if linkDate != "" {
		bi.Time = linkDate
	}
	return bi
}

// String is what `triage version` and `triage --version` print. A build that recorded no
// version, commit or date says so, rather than leave "(devel)" to be guessed at.
func (bi buildInfo) String() string {
	s := "triage " + bi.Version
	switch {
	case bi.Version == develVersion && bi.Revision == "" && bi.Time == "":
		s += "\nbuilt without version information (see README, \"Building a release\")"
	default:
		if bi.Revision != "" {
			s += "\ncommit:     " + bi.Revision
			if bi.Modified {
				s += " (modified)"
			}
		} else {
			s += "\ncommit:     not recorded in this build"
		}
		if bi.Time != "" {
			s += "\ndate:       " + bi.Time
		} else {
			s += "\ndate:       not recorded in this build"
		}
	}
	return s + "\ngo:         " + bi.GoVersion
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Long: `Print triage's version, the commit it was built from and that commit's time: as a
release build set them at link time (-ldflags -X, see the README), else as the Go toolchain
recorded them (the module version it was installed at, the VCS revision and time of the
checkout it was built in). A binary with none of them says it was built without version
information. triage --version prints the same.`,
		Example: `  triage version
  triage --version`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(e.stdout, readBuildInfo())
			return nil
		},
	}
}
