#!/bin/sh
# After the files are gone: systemd forgets the unit. The config files stay until a purge
# (dpkg -P), and the triage user and /var/lib/triage (the SSH host key the team has checked)
# stay always: a reinstall serves with the same key.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
