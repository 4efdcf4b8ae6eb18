#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, without systemd, for the test of sharded batch
# jobs (tests/all/slurm.rs): Debian 12's slurmctld, slurmd, slurm-client and munge, installed
# when missing. Everything it writes is under DIR (config, state, logs, PIDs); commands find
# the cluster through SLURM_CONF=DIR/slurm.conf.
#
#   slurm_cluster.sh start DIR   starts munged, slurmctld and slurmd (again only what is not
#                                running) and waits until the node takes jobs
#   slurm_cluster.sh stop DIR    stops the daemons it started, by their PIDs
set -euo pipefail
cmd=${1:?start or stop}
dir=$(mkdir -p "${2:?a folder}" && cd "$2" && pwd)
alive() { [ -f "$dir/$1.pid" ] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }

if [ "$cmd" = stop ]; then
  for daemon in slurmd slurmctld munged; do
    if alive "$daemon"; then
      pid=$(cat "$dir/$daemon.pid")
      kill "$pid"
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    fi
    rm -f "$dir/$daemon.pid"
  done
  exit 0
fi
[ "$cmd" = start ] || { echo "slurm_cluster: start or stop, not $cmd" >&2; exit 2; }

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null \
  || ! command -v munged >/dev/null; then
  sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
  echo "slurm_cluster: apt-get install slurmctld slurmd slurm-client munge" >&2
  DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null \
    || { sudo_if_needed apt-get update -qq && DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null; }
fi

mkdir -p "$dir/state" "$dir/spool"
node=$(slurmd -C | head -n 1)
cat >"$dir/slurm.conf" <<EOF
ClusterName=clozelab
SlurmctldHost=$(hostname -s)
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ReturnToService=2
$node State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"

if ! alive munged; then
  # munged as its own user, in the foreground so that its PID is this one.
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  setpriv --reuid=munge --regid=munge --init-groups munged -F >"$dir/munged.log" 2>&1 &
  echo $! >"$dir/munged.pid"
  for _ in $(seq 50); do [ -S /run/munge/munge.socket.2 ] && break; sleep 0.1; done
fi
if ! alive slurmctld; then
  slurmctld -D -i -f "$SLURM_CONF" >>"$dir/slurmctld.log" 2>&1 &
  echo $! >"$dir/slurmctld.pid"
fi
if ! alive slurmd; then
  slurmd -D -f "$SLURM_CONF" >>"$dir/slurmd.log" 2>&1 &
  echo $! >"$dir/slurmd.pid"
fi
for _ in $(seq 300); do
  state=$(sinfo -h -o %T 2>/dev/null || true)
  case "$state" in idle*|mixed*|allocated*) echo "slurm_cluster: up ($SLURM_CONF)"; exit 0 ;; esac
  sleep 0.1
done
echo "slurm_cluster: the node did not come up (state: ${state:-none}); logs in $dir" >&2
tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
exit 1
