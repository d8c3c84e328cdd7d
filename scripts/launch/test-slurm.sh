#!/usr/bin/env bash
# Runs the Slurm recipes as a user would against a real one-node Slurm cluster started here
# (slurmctld, slurmd and munge from the distribution's packages, installed if missing; needs
# root): `sbatch scripts/slurm/coordinator.sbatch enumerate h ...` and an array job of two
# workers from `scripts/slurm/workers.sbatch` submitted at once (they wait for the coordinator's
# address: the coordinator's job is held back 15 s so they start first), then
# `sbatch scripts/slurm/one-job.sbatch`. Each result is compared with
# results/h.json; the cluster and everything it wrote are removed at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
[ "$(id -u)" = 0 ] || { echo "test-slurm.sh starts slurmctld and slurmd: run it as root" >&2; exit 1; }
if ! command -v slurmctld > /dev/null || ! command -v munged > /dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge
fi
cargo build --release -q -p coordinator -p worker

work=$(mktemp -d /tmp/cubefarm-slurm-test.XXXXXX)
chmod 755 "$work"
node=$(hostname -s)
conf=$work/slurm.conf
export SLURM_CONF=$conf
cleanup() {
    set +e
    scancel --user root 2>/dev/null
    [ -f "$work/slurmd.pid" ] && kill "$(cat "$work/slurmd.pid")"
    [ -f "$work/slurmctld.pid" ] && kill "$(cat "$work/slurmctld.pid")"
    [ -f "$work/munged.pid" ] && kill "$(cat "$work/munged.pid")"
    sleep 1
    rm -rf "$work" "$root/.cubefarm-slurm-test"
}
trap cleanup EXIT

# munge with a fresh key, private to this test.
mkdir -p "$work/munge"
dd if=/dev/urandom bs=1 count=1024 of="$work/munge/munge.key" 2> /dev/null
chmod 400 "$work/munge/munge.key"
munged --key-file="$work/munge/munge.key" --socket="$work/munge/socket" --pid-file="$work/munged.pid" \
    --log-file="$work/munge/log" --seed-file="$work/munge/seed" --force
export MUNGE_SOCKET=$work/munge/socket   # (the Slurm plugin reads AuthInfo below)

# One node that offers 4 CPUs (the machine has 2: the coordinator and two workers share them).
mkdir -p "$work/spool" "$work/state"
cat > "$conf" <<CONF
ClusterName=cubefarm-test
SlurmctldHost=$node
SlurmctldPort=$((16817 + RANDOM % 1000))
SlurmdPort=$((17817 + RANDOM % 1000))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
NodeName=$node CPUs=4 RealMemory=16000 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
slurmctld -f "$conf"
slurmd -f "$conf"
for _ in $(seq 1 60); do
    sinfo -h -o %T 2> /dev/null | grep -q idle && break
    sleep 1
done
sinfo -h -o "%N %T %c" | grep -q idle || { echo "FAIL: the Slurm node did not come up" >&2; tail -n 20 "$work"/slurm*.log >&2; exit 1; }

export CUBEFARM_RUN_DIR=$root/.cubefarm-slurm-test CUBEFARM_PORT=$((30000 + RANDOM % 20000))
depths() { python3 -c 'import json,sys; [print(d) for d in json.load(open(sys.argv[1]))["depths"]]' "$1"; }
wait_jobs() {
    for _ in $(seq 1 900); do
        [ -z "$(squeue -h -o %i)" ] && return 0
        sleep 1
    done
    echo "FAIL: jobs still queued after 15 minutes:" >&2; squeue >&2; return 1
}
check() {
    local label=$1 json=$2 start=$3
    if ! diff <(depths "$json") <(depths "$root/results/h.json") > /dev/null; then
        echo "FAIL ($label): the distribution differs from results/h.json" >&2; exit 1
    fi
    python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["traffic"]["workers"]; sys.exit(not (len(w) >= 2 and all(x["rows"] > 0 for x in w)))' "$json" \
        || { echo "FAIL ($label): not two working workers" >&2; exit 1; }
    echo "ok ($label): enumerate h under Slurm, $((SECONDS - start)) s from sbatch to the end, same distribution as results/h.json"
}

# Coordinator job and worker array, submitted together; the coordinator's job starts 15 s later,
# so the workers start first and wait for its address.
start=$SECONDS
jid=$(sbatch --parsable --begin=now+15 -o "$work/coordinator-%j.out" scripts/slurm/coordinator.sbatch \
    enumerate h --min-workers 2 --json "$work/h-two-jobs.json")
# Two workers on the one node: they share it (by default each would take a whole node).
sbatch --parsable -o "$work/worker-%A-%a.out" --exclusive=user -c 1 --export=ALL,COORDINATOR_JOB="$jid" \
    --array=1-2 scripts/slurm/workers.sbatch > /dev/null
sleep 5
[ "$(squeue -h -j "$jid" -o %T)" = PENDING ] && [ "$(squeue -h -t RUNNING -o %i | wc -l)" -ge 2 ] \
    || { echo "FAIL: the workers did not start before the coordinator" >&2; squeue >&2; exit 1; }
wait_jobs
[ -s "$work/h-two-jobs.json" ] || { echo "FAIL (two jobs): no result" >&2; cat "$work"/*.out >&2; exit 1; }
check "coordinator job + worker array" "$work/h-two-jobs.json" "$start"

# One job over the node: coordinator step and one worker step (one node here).
start=$SECONDS
sbatch --parsable -o "$work/one-job-%j.out" --nodes=1 scripts/slurm/one-job.sbatch \
    enumerate h --min-workers 1 --json "$work/h-one-job.json" > /dev/null
wait_jobs
[ -s "$work/h-one-job.json" ] || { echo "FAIL (one job): no result" >&2; cat "$work"/one-job-*.out >&2; exit 1; }
if ! diff <(depths "$work/h-one-job.json") <(depths "$root/results/h.json") > /dev/null; then
    echo "FAIL (one job): the distribution differs from results/h.json" >&2; exit 1
fi
echo "ok (one job): enumerate h under Slurm, $((SECONDS - start)) s from sbatch to the end, same distribution as results/h.json"
