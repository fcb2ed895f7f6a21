#!/bin/sh
# After the files are in place: the state directory, and systemd told of the unit. Nothing is
# enabled or started: edit /etc/triage/env and /etc/triage/config.toml, then
# `systemctl enable --now triage`.
set -e
if command -v systemd-tmpfiles >/dev/null 2>&1; then
	systemd-tmpfiles --create /usr/lib/tmpfiles.d/triage.conf || true
else
	install -d -m 0700 -o triage -g triage /var/lib/triage
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
