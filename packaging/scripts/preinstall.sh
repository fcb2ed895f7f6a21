#!/bin/sh
# Before the files are unpacked: the triage system user and group, so that /etc/triage and its
# files are unpacked as root:triage. The entry is the one the package installs in
# /usr/lib/sysusers.d/triage.conf; without systemd-sysusers, useradd makes the same user.
set -e
if getent passwd triage >/dev/null 2>&1; then
	exit 0
fi
if command -v systemd-sysusers >/dev/null 2>&1; then
	systemd-sysusers --inline 'u triage - "triage serve" /var/lib/triage /usr/sbin/nologin'
else
	useradd --system --user-group --home-dir /var/lib/triage --no-create-home \
		--shell /usr/sbin/nologin --comment "triage serve" triage
fi
