#!/bin/sh
# The network-shaped run of docs/BENCHMARKS.md (issue 18): triage and Google's Node client
# (googleapis, bench/node) against `triage emulator` through a proxy adding an 80 ms round
# trip and a 50 Mbit/s cap each way (bench/netshape), both in one run, alternately.
# Needs Go, Node 18+, npm and curl. Prints a Markdown table of medians and ratios.
#
#   sh bench/netshape.sh [runs]        (from the repository's root; default 5 runs)
set -eu
runs=${1:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/triage" .
mkdir "$work/node"
cp bench/node/package.json bench/node/*.js "$work/node/"
(cd "$work/node" && npm install --no-audit --no-fund --silent >/dev/null)
go run ./bench/netshape -triage "$work/triage" -node "$work/node" -runs "$runs" -rtt 80ms -mbit 50
