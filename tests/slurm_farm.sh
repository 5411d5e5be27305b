#!/usr/bin/env bash
# slurm_farm.sh - scenario test of `cuco evolve --farm slurm` on a real
# one-node Slurm cluster that the test starts itself (slurmctld, slurmd and
# munged with configuration, keys and state in a temporary directory; no
# systemd, no cgroups; four stand-in GPUs as GRES on device files), with the
# stand-in harness and nvcc of tests/fixtures/farm so no GPU is needed:
#
#   - doctor and evolve show Slurm's view; a farm too small is refused
#   - in an allocation, two steps are in flight at once; one is scancel'ed
#     by someone else and queued again, not scored
#   - cuco is killed with SIGKILL while one step of a batch has finished and
#     another is held (Slurm ends it with its srun); --resume cancels a step
#     of the run left alive, takes the finished step's result from the run
#     directory, and ends with every candidate evaluated exactly once
#   - Ctrl-C cancels the steps in flight
#   - a step lost four times stops the run without storing its batch
#   - without an allocation each step is a job of its own
#   - cuco bench --farm slurm runs its harness as a step
#
#   bash tests/slurm_farm.sh <path-to-cuco>      (CUCO_HOME: the source tree)
#
# Needs root (slurmd), the Slurm daemons and client, munge and the sqlite3
# CLI (scripts/setup-slurm.sh installs them); exits 77 (skipped) without them.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/slurm_farm.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures/farm
export CUCO_HOME=${CUCO_HOME:-$(dirname "$HERE")}
export PATH=$PATH:/usr/sbin:/sbin
for c in slurmctld slurmd munged srun salloc sinfo squeue scancel scontrol sqlite3; do
	if ! command -v "$c" >/dev/null; then
		echo "skipped: $c is not installed (scripts/setup-slurm.sh installs Slurm and munge)"
		exit 77
	fi
done
if [ "$(id -u)" != 0 ]; then
	echo "skipped: slurmd runs tasks as their user and must start as root"
	exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/cuco-slurm.XXXXXX") || exit 2
chmod 755 "$T"
pass=0
fail=0

stop_cluster() {
	if [ -n "${SLURM_CONF:-}" ]; then
		scancel --me >/dev/null 2>&1
		scontrol shutdown >/dev/null 2>&1
	fi
	for f in "$T/slurmctld.pid" "$T/slurmd.pid" "$T/munge/pid"; do
		[ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	sleep 0.5
	for f in "$T/slurmctld.pid" "$T/slurmd.pid" "$T/munge/pid"; do
		[ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
	rm -rf "$T"
}
trap stop_cluster EXIT

ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	printf 'FAIL: %s\n' "$1"
	shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/    /' "$f" | tail -n 25; done
}
# expect NAME TEXT FILE...: TEXT appears in one of the files.
expect() {
	local name=$1 text=$2
	shift 2
	if cat "$@" 2>/dev/null | grep -qF -- "$text"; then ok; else bad "$name: no '$text'" "$@"; fi
}
# until_true WHAT CMD...: poll CMD (every 0.1 s, at most 60 s); 1 if it never held.
until_true() {
	local what=$1 i
	shift
	for ((i = 0; i < 600; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	bad "waited in vain for $what"
	return 1
}

# ---- the cluster: one node, four stand-in GPUs, everything under $T
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/log" "$T/dev"
chmod 700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$T/munge/munge.key"
munged -f --key-file="$T/munge/munge.key" --socket="$T/munge/sock" --pid-file="$T/munge/pid" \
	--log-file="$T/log/munged.log" --seed-file="$T/munge/seed" || {
	echo "skipped: munged does not start here"
	exit 77
}
# slurmd wants character devices for GPU files; those of /dev/null, zero, full, random do.
i=0
for minor in 3 5 7 8; do
	mknod "$T/dev/gpu$i" c 1 "$minor" 2>/dev/null || ln -s /dev/null "$T/dev/gpu$i"
	i=$((i + 1))
done
H=$(hostname -s)
P=$((17000 + $$ % 4000 * 2))
cat >"$T/slurm.conf" <<EOF
ClusterName=cucotest
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$P
SlurmdPort=$((P + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
MinJobAge=300
KillWait=2
NodeName=$H NodeAddr=127.0.0.1 CPUs=8 RealMemory=1000 Gres=gpu:4 State=UNKNOWN
PartitionName=gpu Nodes=$H Default=YES MaxTime=INFINITE State=UP
EOF
echo "Name=gpu File=$T/dev/gpu[0-3]" >"$T/gres.conf"
export SLURM_CONF=$T/slurm.conf
slurmctld -f "$SLURM_CONF" -i && slurmd -f "$SLURM_CONF" -N "$H" || {
	bad "the Slurm daemons do not start" "$T"/log/*.log
	exit 1
}
node_idle() { [ "$(sinfo -h -o %t 2>/dev/null)" = idle ]; }
until_true "the node to come up" node_idle || exit 1

# ---- cuco on the head: stand-ins for the harness and nvcc, state in $T
export CUCO_STATE=$T/cuco-state
export CUCO_HARNESS=$FIX/cuco-harness
export CUCO_NVCC=$FIX/nvcc
export CUCO_STANDIN_LEDGER=$T/ledger
: >"$T/ledger"
DB=$T/farm.db
EVOLVE=(evolve gemm_allgather --islands 1 --children 4 --no-recheck --store "$DB")
cd "$T" || exit 2

"$CUCO" doctor >"$T/doctor.out" 2>&1
expect "doctor: partition" "gpu*: 1 node idle ($H), GPUs per node 4 (GRES gpu:4)" "$T/doctor.out"
expect "doctor: state directory" "shared with the farm's nodes" "$T/doctor.out"

"$CUCO" "${EVOLVE[@]}" --farm pbs >"$T/e.out" 2>&1
[ $? = 5 ] && ok || bad "--farm pbs: exit 5" "$T/e.out"
expect "--farm pbs" "--farm pbs: expected slurm" "$T/e.out"
"$CUCO" "${EVOLVE[@]}" --ranks 8 --farm slurm >"$T/e.out" 2>&1
[ $? = 15 ] && ok || bad "8 ranks on 4-GPU nodes: exit 15" "$T/e.out"
expect "8 ranks on 4-GPU nodes" "have at most 4 GPUs (GRES); programs of 8 ranks need 8" "$T/e.out"
[ "$(sqlite3 "$DB" 'SELECT COUNT(*) FROM runs' 2>/dev/null || echo 0)" = 0 ] && ok ||
	bad "a refused farm stores no run"

# the run's own steps (not the check or probe steps): "ID NAME" lines
run_steps() { squeue -h --me --steps -o '%i %j' | grep -E " cuco-[0-9a-f]{8}-r$1-[0-9a-f]{16}$"; }
ends() { [ "$(grep -c '^end' "$T/ledger")" -ge "$1" ]; }

# ---- in an allocation: two steps at once, one cancelled by someone else
JOB=$(salloc --no-shell -N1 -n4 --gres=gpu:4 2>&1 | grep -o 'allocation [0-9]*' | grep -o '[0-9]*')
[ -n "$JOB" ] && ok || bad "salloc gave no allocation"
: >"$T/pass"
SLURM_JOB_ID=$JOB CUCO_STANDIN_GATE=$T/gate CUCO_STANDIN_HOLD_AFTER=3 CUCO_STANDIN_PASS=$T/pass \
	setsid "$CUCO" "${EVOLVE[@]}" --farm slurm --budget-evals 14 >"$T/a.out" 2>"$T/a.err" &
PID=$!
two() { [ "$(run_steps 1 | wc -l)" = 2 ]; }
if until_true "two steps in flight" two; then ok; fi
expect "default slots: the allocation's GPUs / ranks" "2 Slurm step slots" "$T/a.err"
expect "the run directory is checked" "is shared with the farm's nodes" "$T/a.err"
scancel "$(run_steps 1 | head -n 1 | cut -d' ' -f1)"
requeued() { grep -q 'queued again (1 of 3)' "$T/a.err"; }
until_true "the cancelled step to be queued again" requeued && ok
touch "$T/gate"
# generation 0 (two steps, one of them run twice), then generation 1: one step passes, one is held
held() { grep -q '^held' "$T/ledger" && ends 3; }
until_true "a finished and a held step" held && ok
{
	kill -9 -- "-$PID"
	wait "$PID"
} 2>/dev/null
# srun dies with cuco (it is started to) and Slurm ends its step; a step that outlives its
# cuco (a head that lost its network, an srun killed apart) is what --resume cancels: one
# is started here under the run's name.
no_steps() { [ -z "$(run_steps "$1")" ]; }
until_true "the killed cuco's steps to end" no_steps 1 && ok
TAG=$(basename "$(ls -d "$CUCO_STATE"/farm/cuco-*-r1)")
SLURM_JOB_ID=$JOB setsid srun --exact -N1 -n1 --gres=none --job-name="$TAG-0123456789abcdef" sleep 600 \
	>/dev/null 2>&1 &
one() { [ "$(run_steps 1 | wc -l)" = 1 ]; }
until_true "a step left behind" one && ok

SLURM_JOB_ID=$JOB "$CUCO" evolve --resume 1 --farm slurm --no-recheck --store "$DB" \
	>"$T/b.out" 2>"$T/b.err"
[ $? = 0 ] && ok || bad "resume: exit 0" "$T/b.out" "$T/b.err"
expect "resume cancels what was left" "cancelled 1 step an earlier process of run 1 left running" \
	"$T/b.err"
expect "resume takes the finished step" "finished for an earlier process of the run" "$T/b.err"
expect "resume ends the run" "# evolve run 1: done (budget-evals), 14 evaluated" "$T/b.out"
until_true "no step of run 1 left" no_steps 1 && ok
# each candidate of run 1 has one evaluation, ok; each finished once on the farm
Q="SELECT p.name FROM programs p LEFT JOIN evaluations e ON e.program_id = p.id
   WHERE p.run_id = 1 AND p.origin = 'candidate' GROUP BY p.id HAVING COUNT(e.id) != 1"
[ -z "$(sqlite3 "$DB" "$Q")" ] && ok || bad "a candidate without exactly one evaluation: $(sqlite3 "$DB" "$Q")"
[ "$(sqlite3 "$DB" "SELECT COUNT(*) FROM evaluations WHERE run_id = 1 AND status != 'ok'")" = 0 ] &&
	ok || bad "an evaluation of run 1 is not ok: a lost step was scored"
grep '^done' "$T/ledger" | cut -d' ' -f3 | grep -v '^baseline$' | sort >"$T/done"
[ -z "$(uniq -d "$T/done")" ] && ok || bad "evaluated twice on the farm: $(uniq -d "$T/done" | tr '\n' ' ')"
[ "$(wc -l <"$T/done")" = "$(sqlite3 "$DB" "SELECT COUNT(DISTINCT program_id) FROM evaluations WHERE run_id = 1")" ] &&
	ok || bad "the farm finished $(wc -l <"$T/done") candidates for the store's evaluations"
ls "$CUCO_STATE"/farm/cuco-*-r1 >/dev/null 2>&1 && bad "a finished run keeps its run directory" || ok

# ---- Ctrl-C: the steps in flight are cancelled, nothing of their batch is stored
: >"$T/ledger"
rm -f "$T/gate"
SLURM_JOB_ID=$JOB CUCO_STANDIN_GATE=$T/gate setsid "$CUCO" "${EVOLVE[@]}" --farm slurm \
	--budget-evals 6 >"$T/c.out" 2>"$T/c.err" &
PID=$!
in_flight() { [ -n "$(run_steps 2)" ]; }
until_true "a step of run 2" in_flight
kill -INT "$PID"
wait "$PID"
[ $? != 0 ] && ok || bad "Ctrl-C: the run stops with an error" "$T/c.err"
expect "Ctrl-C" "interrupted: its steps were cancelled" "$T/c.err"
expect "Ctrl-C: resumable" "'cuco evolve --resume 2' continues it" "$T/c.err"
until_true "no step of run 2 left" no_steps 2 && ok
[ "$(sqlite3 "$DB" 'SELECT COUNT(*) FROM evaluations WHERE run_id = 2')" = 0 ] && ok ||
	bad "Ctrl-C stored evaluations of the cancelled batch"
scancel "$JOB"

# ---- no allocation: each step is a job of its own
: >"$T/ledger"
touch "$T/gate"
"$CUCO" "${EVOLVE[@]}" --farm slurm --slots 2 --budget-evals 6 >"$T/d.out" 2>"$T/d.err"
[ $? = 0 ] && ok || bad "jobs of their own: exit 0" "$T/d.out" "$T/d.err"
expect "jobs of their own" "none (each step is a job of its own)" "$T/d.err"
expect "jobs of their own: done" "done (budget-evals), 6 evaluated, 6 correct" "$T/d.out"
# the step's two GPUs came from Slurm's GRES (gpu:2 of the node's four)
sqlite3 "$DB" "SELECT DISTINCT gpu FROM evaluations WHERE run_id = 3" >"$T/gpus"
expect "a step's GPUs from GRES" "CUDA_VISIBLE_DEVICES=" "$T/gpus"
[ -z "$(grep -v 'CUDA_VISIBLE_DEVICES=[0-3],[0-3])' "$T/gpus")" ] && ok ||
	bad "a step without two GPUs of its own" "$T/gpus"

# ---- bench: each shape's harness run is a step on the farm
"$CUCO" bench gemm_allgather --shape 8192 --farm slurm --store "$DB" >"$T/f.out" 2>"$T/f.err"
[ $? = 0 ] && ok || bad "bench on the farm: exit 0" "$T/f.out" "$T/f.err"
expect "bench on the farm: GPUs from GRES" "stand-in H100 (CUDA_VISIBLE_DEVICES=" "$T/f.out"
expect "bench on the farm: the baseline" "baseline         baseline  ok" "$T/f.out"
"$CUCO" bench gemm_allgather --farm slurm --compile-only --store "$DB" >"$T/f.out" 2>&1
[ $? = 5 ] && ok || bad "bench --farm --compile-only: exit 5" "$T/f.out"

# ---- a step lost four times: the run stops, nothing of its batch is stored
: >"$T/ledger"
rm -f "$T/gate"
JOB=$(salloc --no-shell -N1 -n4 --gres=gpu:4 2>&1 | grep -o 'allocation [0-9]*' | grep -o '[0-9]*')
SLURM_JOB_ID=$JOB CUCO_STANDIN_GATE=$T/gate "$CUCO" "${EVOLVE[@]}" --farm slurm --slots 1 \
	--budget-evals 6 >"$T/g.out" 2>"$T/g.err" &
PID=$!
last=
other_step() { id=$(run_steps 5 | head -n 1 | cut -d' ' -f1) && [ -n "$id" ] && [ "$id" != "$last" ]; }
for i in 1 2 3 4; do
	until_true "step $i of run 5" other_step || break
	scancel "$id"
	last=$id
done
wait "$PID"
[ $? != 0 ] && ok || bad "a step lost four times: the run stops" "$T/g.err"
expect "a step lost four times" "queued again (3 of 3)" "$T/g.err"
expect "a step lost four times: given up" "the farm gave up on a step lost 4 times" "$T/g.err"
[ "$(sqlite3 "$DB" 'SELECT COUNT(*) FROM evaluations WHERE run_id = 5')" = 0 ] && ok ||
	bad "a lost step's batch was stored"
until_true "no step of run 5 left" no_steps 5 && ok
scancel "$JOB"

# under a sanitizer build a report in any output fails the test
if grep -l 'Sanitizer\|runtime error:' "$T"/*.out "$T"/*.err >"$T/san" 2>/dev/null; then
	bad "sanitizer report in $(tr '\n' ' ' <"$T/san")"
else
	ok
fi

printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" = 0 ]
