#!/usr/bin/env bash
# as_nobody.sh TEST - run a hostile test as an unprivileged user. As root (CI, the GPU nodes)
# under setpriv as nobody, with no capabilities and a home of its own; as anyone else, as that
# user. Exit 77 (ctest: skipped), saying why, where nobody cannot run it here.
set -u
test=$1
if [ "$(id -u)" != 0 ]; then
	exec "$test"
fi
if ! command -v setpriv >/dev/null; then
	echo "as_nobody: no setpriv here (util-linux): skipped"
	exit 77
fi
if ! uid=$(id -u nobody 2>/dev/null) || ! gid=$(id -g nobody 2>/dev/null); then
	echo "as_nobody: no user nobody here: skipped"
	exit 77
fi
as_nobody() {
	setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --bounding-set=-all \
		--no-new-privs "$@"
}
if ! as_nobody test -x "$test" || ! as_nobody test -r "${CUCO_HOME:-/}"; then
	echo "as_nobody: nobody cannot reach $test or ${CUCO_HOME:-} (a folder above is closed): skipped"
	exit 77
fi
home=$(mktemp -d /tmp/cuco-hostile-home.XXXXXX)
chown "$uid:$gid" "$home"
HOME=$home TMPDIR=/tmp as_nobody "$test"
rc=$?
rm -rf "$home"
exit $rc
