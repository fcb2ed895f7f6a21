#!/bin/sh
# The man page and the shell completions the release's archives and packages carry, printed by
# triage itself, built as the release is (trimmed paths, no cgo) and stamped with the same
# version, commit and date, into packaging/build/ (not tracked). goreleaser runs it before the
# builds: sh packaging/extras.sh VERSION COMMIT DATE.
set -eu
cd "$(dirname "$0")/.."
out=packaging/build
pkg=github.com/triage-dev/triage/internal/cli
rm -rf "$out"
mkdir -p "$out/man" "$out/completions"
CGO_ENABLED=0 go build -trimpath -ldflags "-X $pkg.version=$1 -X $pkg.commit=$2 -X $pkg.date=$3" -o "$out/triage" .
"$out/triage" man | gzip -9n > "$out/man/triage.1.gz"
for sh in bash zsh fish; do
	"$out/triage" completion "$sh" > "$out/completions/triage.$sh"
done
rm "$out/triage"
