#!/usr/bin/env bash
# A real Slurm cluster on this one machine, for tests and trying things out:
# MUNGE with its own key and socket, slurmctld, and one slurmd per emulated node
# (`slurmd -N NAME`, each on its own port, NodeAddr=127.0.0.1), all under DIR.
#
#   scripts/slurm-test-cluster.sh start DIR [NODES] [BASE_PORT] [WARM]   # prints SLURM_CONF=DIR/slurm.conf
#   scripts/slurm-test-cluster.sh stop DIR
#   scripts/slurm-test-cluster.sh stop-controller DIR    # slurmctld alone stopped (jobs run on under slurmd)
#   scripts/slurm-test-cluster.sh start-controller DIR   # and started again from its saved state
#
# Nodes are n1..nN with 2 CPUs and 1000 MB each; odd nodes carry the features
# ib,island-a, even ones ib,island-b; n1 also has sec-HardenedNode and group-rack1; the last WARM nodes
# (default 0) also wsag-warm, kept prepared for interactive sessions. One partition, batch.
# Needs Debian's slurm-wlm and munge (.ci/run installs them) and root (slurmd runs jobs).
set -euo pipefail

command=${1:?usage: $0 start|stop DIR [NODES] [BASE_PORT]}
dir=$(realpath -m "${2:?usage: $0 start|stop DIR [NODES] [BASE_PORT]}")
nodes=${3:-4}
base=${4:-$((12000 + (RANDOM % 400) * 20))}  # below the ephemeral range (32768-)
warm=${5:-0}
export SLURM_CONF="$dir/slurm.conf"

stop() {
  [ -f "$dir/slurm.conf" ] || return 0
  scontrol shutdown >/dev/null 2>&1 || true
  for pidfile in "$dir"/slurmd-*.pid "$dir/slurmctld.pid"; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  sleep 0.5
  for pidfile in "$dir"/slurmd-*.pid "$dir/slurmctld.pid" "$dir/munged.pid"; do
    [ -f "$pidfile" ] && kill -9 "$(cat "$pidfile")" 2>/dev/null || true
  done
  return 0
}

case "$command" in
  stop) stop; exit 0 ;;
  stop-controller)
    pid=$(cat "$dir/slurmctld.pid")
    kill "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    exit 0 ;;
  start-controller)
    /usr/sbin/slurmctld
    for _ in $(seq 1 300); do scontrol ping 2>/dev/null | grep -q UP && exit 0; sleep 0.2; done
    echo "slurmctld in $dir did not come back" >&2
    exit 1 ;;
  start) ;;
  *) echo "unknown command $command: start, stop, stop-controller or start-controller" >&2; exit 2 ;;
esac

mkdir -p "$dir/state" "$dir/log" "$dir/spool"
head -c 1024 /dev/urandom >"$dir/munge.key"
chmod 400 "$dir/munge.key"
/usr/sbin/munged -f --socket="$dir/munge.sock" --key-file="$dir/munge.key" --log-file="$dir/log/munged.log" \
  --pid-file="$dir/munged.pid" --seed-file="$dir/munged.seed"

{
  cat <<CONF
ClusterName=wsagtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
# Start a batch job as soon as it is submitted, not up to 3 s later (Slurm's default): the
# hand-over the tests' timing model plans (handoverSeconds) must cover Slurm's start latency.
SchedulerParameters=batch_sched_delay=0
SelectType=select/linear
ReturnToService=1
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
KillWait=5
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
PlugStackConfig=/dev/null
CONF
  for i in $(seq 1 "$nodes"); do
    features="ib,island-$([ $((i % 2)) -eq 1 ] && echo a || echo b)"
    [ "$i" -eq 1 ] && features="$features,sec-HardenedNode,group-rack1"
    [ "$i" -gt $((nodes - warm)) ] && features="$features,wsag-warm"
    echo "NodeName=n$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 1 + i)) CPUs=2 RealMemory=1000 Feature=$features State=UNKNOWN"
  done
  echo "PartitionName=batch Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP"
} >"$SLURM_CONF"

/usr/sbin/slurmctld -i
for i in $(seq 1 "$nodes"); do
  mkdir -p "$dir/spool/n$i"
  /usr/sbin/slurmd -N "n$i"
done

# Ready when every node is idle (allow a minute: a loaded machine starts daemons slowly).
for _ in $(seq 1 300); do
  idle=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | wc -l)
  [ "$idle" -ge "$nodes" ] && { echo "SLURM_CONF=$SLURM_CONF"; exit 0; }
  sleep 0.2
done
echo "slurm test cluster in $dir did not come up; the last lines of its logs:" >&2
tail -n 5 "$dir"/log/*.log >&2 || true
sinfo >&2 || true
stop
exit 1
