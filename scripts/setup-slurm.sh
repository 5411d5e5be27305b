#!/usr/bin/env bash
# setup-slurm.sh - install what tests/slurm_farm.sh starts its one-node Slurm
# cluster with (the daemons, the client commands, munge) on Debian/Ubuntu, or
# say what to install when we cannot (not root, no apt). Installs only: no
# service is started or enabled (the test starts its own under a temporary
# directory and stops them).
set -eu
pkgs="slurmctld slurmd slurm-client munge sqlite3"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "setup-slurm: $pkgs installed"
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "setup-slurm: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# a policy-rc.d keeps the packages' init scripts from starting daemons here
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
	echo "setup-slurm: please install:$missing" >&2
	echo "  sudo apt-get install$missing" >&2
	exit 1
fi
