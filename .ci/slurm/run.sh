#!/usr/bin/env bash
# Runs the Slurm scripts of docs/scale.md, copied out of the page, on a
# real Slurm: Debian's slurm-wlm and munge, a controller and one node on
# this machine, all state in a temporary folder. Each script is submitted
# as the page shows it, at the sizes of its trial commands; the merged
# results must equal the unsharded runs' apart from timings. The daemons
# it starts are stopped on exit.
#
# Skips (exit 0, "SKIP slurm: …") only where slurm-wlm and munge cannot be
# installed: not root, no apt-get, or apt-get failing. Needs root, as
# slurmd does. SLURM_WAIT (default 300) bounds each wait for jobs in
# seconds; .ci/run bounds the whole script with timeout(1).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
wait_limit=${SLURM_WAIT:-300}

skip() { echo "SKIP slurm: $*"; exit 0; }
say() { echo "-- $(date -u +%T) $*"; }

# ---- packages
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
  ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  [ "$(id -u)" = 0 ] || skip "slurm-wlm and munge are not installed and installing them needs root"
  command -v apt-get >/dev/null || skip "slurm-wlm and munge are not installed and there is no apt-get"
  say "installing slurm-wlm and munge"
  apt_log=$(mktemp)
  if ! { DEBIAN_FRONTEND=noninteractive apt-get update -q &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge; } >"$apt_log" 2>&1; then
    tail -n 20 "$apt_log"
    skip "apt-get could not install slurm-wlm and munge (log above)"
  fi
  rm -f "$apt_log"
fi
[ "$(id -u)" = 0 ] || { echo "slurm: slurmd must run as root"; exit 1; }
say "$(slurmctld -V), $(munged -V 2>&1 | head -n 1)"

# ---- a private cluster in a temporary folder
tmp=$(mktemp -d /tmp/trj-slurm.XXXXXX)
chmod 700 "$tmp"
pids=()
cleanup() {
  status=$?
  # Jobs still queued or running are cancelled, and their slurmstepd
  # processes (one per job step, each with a socket in the spool folder)
  # given time to end, before the daemons are stopped.
  if [ -n "${SLURM_CONF:-}" ] && [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
    scancel --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 15); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 1; done
  fi
  for _ in $(seq 15); do [ -z "$(find "$tmp"/spool -type s 2>/dev/null)" ] && break; sleep 1; done
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$status" != 0 ]; then
    for log in "$tmp"/slurmctld.log "$tmp"/slurmd.log "$tmp"/munged.log "$tmp"/work/logs/*; do
      [ -f "$log" ] && { echo "---- $log"; tail -n 40 "$log"; }
    done
    echo "slurm: FAILED (exit $status)"
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
# timeout(1) and ^C end the script through cleanup.
trap 'exit 143' TERM
trap 'exit 130' INT

mkdir -p "$tmp"/state "$tmp"/spool "$tmp"/bin "$tmp"/work
dd if=/dev/urandom of="$tmp"/munge.key bs=1024 count=1 status=none
chmod 400 "$tmp"/munge.key
munged --force --key-file="$tmp"/munge.key --socket="$tmp"/munge.sock \
  --pid-file="$tmp"/munged.pid --log-file="$tmp"/munged.log --seed-file="$tmp"/munged.seed
for _ in $(seq 50); do [ -S "$tmp"/munge.sock ] && break; sleep 0.1; done
pids+=("$(cat "$tmp"/munged.pid)")

host=$(hostname -s)
# slurmd -C prints this machine's node line: its CPUs, their layout and
# its memory.
node=$(slurmd -C | head -n 1)
case $node in NodeName=*) ;; *) echo "slurm: slurmd -C printed: $node"; exit 1 ;; esac
export SLURM_CONF=$tmp/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=trjci
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
SlurmctldPort=${SLURMCTLD_PORT:-6817}
SlurmdPort=${SLURMD_PORT:-6818}
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=3600
$node State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
# In sessions of their own: timeout(1) signals its whole process group,
# and the controller must outlive this script's TERM to cancel the jobs
# left (cleanup). setsid execs the daemon in place, so $! is its pid.
setsid slurmctld -D -i >"$tmp"/slurmctld.out 2>&1 &
pids+=($!)
setsid slurmd -D >"$tmp"/slurmd.out 2>&1 &
pids+=($!)
for i in $(seq 300); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  [ "$i" = 300 ] && { echo "slurm: node $host is \"$state\" after 30 s, not idle"; exit 1; }
  sleep 0.1
done
say "cluster up: $(sinfo -h -o '%P %D node %T, %c CPUs, %m MB')"

# ---- trj, the doc's scripts and the checks
GOBIN=$tmp/bin go install ./cmd/trj
trj=$tmp/bin/trj
work=$tmp/work
# script NAME: the fenced block after "<!-- script NAME -->" in scale.md.
script() {
  awk -v want="<!-- script $1 -->" '
    $0 == want { found = 1; next }
    found == 1 && /^```/ { found = 2; next }
    found == 2 && /^```/ { exit }
    found == 2 { print }
  ' "$repo"/docs/scale.md >"$work/$1"
  [ -s "$work/$1" ] || { echo "slurm: docs/scale.md has no script $1"; exit 1; }
  chmod +x "$work/$1"
}
for s in sample.sbatch factor-study.sbatch submit-factor.sh sas.sbatch submit-sas.sh; do script "$s"; done

# wait_jobs ID…: waits until the jobs and their array tasks have left the
# queue, then requires each to have completed with exit code 0, or with
# the state $want_state when set.
wait_jobs() {
  local start=$SECONDS ids
  ids=$(IFS=,; echo "$*")
  while [ -n "$(squeue -h -j "$ids" -o %i 2>/dev/null)" ]; do
    if [ $((SECONDS - start)) -ge "$wait_limit" ]; then
      echo "slurm: jobs $ids still queued after $wait_limit s:"; squeue -j "$ids"; exit 1
    fi
    sleep 1
  done
  local line bad=0
  while read -r line; do
    echo "   $line"
    case " $line " in *" JobState=${want_state:-COMPLETED} "*) ;; *) bad=1 ;; esac
    if [ -z "${want_state:-}" ]; then
      case " $line " in *" ExitCode=0:0 "*) ;; *) bad=1 ;; esac
    fi
  done < <(for id in "$@"; do
    scontrol -o show job "$id" | awk '{
      line = ""
      for (i = 1; i <= NF; i++)
        if ($i ~ /^(JobId|ArrayTaskId|JobName|JobState|Reason|ExitCode)=/) line = line " " $i
      print substr(line, 2)
    }'
  done)
  [ "$bad" = 0 ] || { echo "slurm: jobs $ids did not end as expected"; exit 1; }
  say "jobs $ids done in $((SECONDS - start)) s"
}
# submitted: the job id in sbatch's "Submitted batch job N".
submitted() { sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' | tail -n 1; }
# untimed FILE: FILE without its timings: the "seconds" members of a JSON
# file; the elapsed-time lines of a CSV file of trj sample, and the line
# naming the shard that wrote it (which the whole run's file lacks).
go build -o "$tmp"/bin/untimed "$repo"/.ci/slurm/untimed.go
untimed() {
  case $1 in
    *.json) "$tmp"/bin/untimed "$1" ;;
    *.csv) grep -v -E '^# (shard = [0-9]+/[0-9]+|( Elapsed Time:)? +[0-9.]+ seconds \((Warm-up|Sampling|Total)\))$' "$1" ;;
    *) cat "$1" ;;
  esac
}
# same A B: A and B are byte-identical apart from timings.
same() {
  untimed "$1" >"$tmp"/a
  untimed "$2" >"$tmp"/b
  if ! cmp -s "$tmp"/a "$tmp"/b; then
    echo "slurm: $1 and $2 differ apart from timings:"
    diff "$tmp"/a "$tmp"/b | head -n 20
    exit 1
  fi
  echo "   same apart from timings: $1 $2 ($(wc -c <"$tmp"/a) bytes compared)"
}

cd "$work"
mkdir -p logs

# 1. An array of four trj sample chains (trj on PATH), chain 3 lost and
#    rerun alone as the page says, against the four-chain run.
say "trj sample: array of 4 tasks"
export PATH=$tmp/bin:$PATH
trial=(-chains 4 -shard 4 -draws 200 -warmup 200)
jid=$(sbatch --array=1-4 sample.sbatch "${trial[@]}" | submitted)
wait_jobs "$jid"
rm draws/diamonds_3.csv
say "trj sample: shard 3 rerun alone"
jid=$(sbatch --array=3 sample.sbatch "${trial[@]}" -shard 3/4 | submitted)
wait_jobs "$jid"
"$trj" sample -model diamonds -chains 4 -draws 200 -warmup 200 -quiet -o whole/diamonds.csv >/dev/null
for c in 1 2 3 4; do same draws/diamonds_$c.csv whole/diamonds_$c.csv; done
"$trj" summary draws/diamonds_*.csv >sharded.txt
"$trj" summary whole/diamonds_*.csv >whole.txt
same sharded.txt whole.txt
# Arrays that cannot say which shards their tasks are: refused at once,
# naming their tasks and ids.
say "trj sample: arrays of one task and with a gap are refused"
jid=$(sbatch --array=3 sample.sbatch "${trial[@]}" | submitted)
want_state=FAILED wait_jobs "$jid"
grep -h 'has 1 task (id 3) for 4 shards' logs/sample_"$jid"_3.out
jid=$(sbatch --array=1,2,3,5 sample.sbatch "${trial[@]}" | submitted)
want_state=FAILED wait_jobs "$jid"
grep -h 'has 4 tasks (ids from 1 to 5, with gaps) for 4 shards' logs/sample_"$jid"_5.out

# 2. trj run sas staged: a pilot array, a fit job, a chain array of three
#    and a merge job, one after the other (trj by $TRJ); then a chain shard
#    rerun alone, and a failed pilot stage cancelling every job after it.
say "trj run sas staged: pilots, fit, 3 chain shards, merge"
export TRJ=$trj
out=$(./submit-sas.sh)
echo "$out"
read -r pilots fit chains < <(echo "$out" | sed -n 's/^stages: jobs \([0-9]*\) \([0-9]*\) \([0-9]*\)$/\1 \2 \3/p')
[ -n "$chains" ] || { echo "slurm: submit-sas.sh printed no stage jobs"; exit 1; }
merge=$(echo "$out" | submitted)
wait_jobs "$pilots" "$fit" "$chains" "$merge"
ls trj-out/sas/stages/*/
"$trj" run sas -quiet -out whole-sas -json whole-sas.json >/dev/null
same trj-out/sas/sas.json whole-sas.json
say "trj run sas: chain shard 2 rerun alone"
rm trj-out/sas/shard_2_of_3.json
jid=$(sbatch --array=2 sas.sbatch -stage chains -shard 2/3 | submitted)
wait_jobs "$jid"
"$trj" merge -quiet -out sas-rerun -json sas-rerun.json trj-out/sas/shard_*_of_3.json >/dev/null
same sas-rerun.json whole-sas.json
say "trj run sas: a failed pilot stage cancels the jobs after it"
out=$(./submit-sas.sh -seed 0x)
read -r pilots fit chains < <(echo "$out" | sed -n 's/^stages: jobs \([0-9]*\) \([0-9]*\) \([0-9]*\)$/\1 \2 \3/p')
want_state=FAILED wait_jobs "$pilots"
want_state=CANCELLED wait_jobs "$fit" "$chains" "$(echo "$out" | submitted)"

# 3. The smallest factor study array: two shards of one pair each.
say "trj study factor: 2 shards and a merge job"
factor=(-n 200 -pairs 2 -reps 2)
out=$(SHARDS=2 ./submit-factor.sh "${factor[@]}")
echo "$out"
jid=$(echo "$out" | sed -n 's/^shards: job \([0-9]*\)$/\1/p')
wait_jobs "$jid" "$(echo "$out" | submitted)"
"$trj" study factor "${factor[@]}" -quiet -out whole-factor -json whole-factor.json >/dev/null
same trj-out/factor-study/study.json whole-factor.json

# 4. A failing shard: its merge job is cancelled, not left pending.
say "a failed shard cancels its merge job"
out=$(SHARDS=2 ./submit-factor.sh -pairs 1)
jid=$(echo "$out" | sed -n 's/^shards: job \([0-9]*\)$/\1/p')
want_state=FAILED wait_jobs "$jid"
want_state=CANCELLED wait_jobs "$(echo "$out" | submitted)"
scontrol -o show job "$(echo "$out" | submitted)" | grep -q 'Reason=DependencyNeverSatisfied' ||
  { echo "slurm: the merge job was not cancelled for its dependency"; exit 1; }
grep -h 'at most 1 shards' logs/factor_"$jid"_*.out | head -n 1

say "slurm: PASS"
