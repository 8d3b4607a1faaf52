#!/usr/bin/env bash
# Restarts one component of the running test cluster, as an outage would: SIGTERM
# (SIGKILL after the grace), down for a while, then the same command line again,
# appending to the same log, until it serves again. For fault-injection tests (an API
# server or etcd that goes away mid-apply); the rest of the cluster keeps running.
#
#   hack/testcluster/restart.sh NAME [--down SECONDS] [--kill]
#
# NAME is a component up.sh started (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok, metrics-server, provisioner). --down is how long it stays
# down (default 0); --kill sends SIGKILL at once instead of SIGTERM.
# Environment: ONTO_TESTCLUSTER_DIR (default <repo>/.cluster), as up.sh;
# ONTO_TESTCLUSTER_STOP_GRACE (default 30: kube-apiserver drains for more than 5 s).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=${ONTO_TESTCLUSTER_DIR:-$repo/.cluster}
grace=${ONTO_TESTCLUSTER_STOP_GRACE:-30}
# shellcheck source=lib.sh
. "$here/lib.sh"

log() { echo "testcluster: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

name=${1:-}
[ -n "$name" ] || die "usage: $0 NAME [--down SECONDS] [--kill]"
shift
down=0
signal=TERM
while (($#)); do
  case $1 in
    --down) down=${2:?--down needs seconds}; shift 2 ;;
    --kill) signal=KILL; shift ;;
    *) die "unknown argument $1" ;;
  esac
done

pidfile=$dir/pids/$name.pid
argvfile=$dir/pids/$name.argv
[ -f "$pidfile" ] && [ -f "$argvfile" ] || die "no running $name recorded in $dir (start the cluster with up.sh)"
pid=$(cat "$pidfile")
ours "$name" "$pid" || die "pid $pid of $pidfile is not $name: the cluster in $dir is not running"

t0=$SECONDS
kill "-$signal" "$pid" 2>/dev/null || true
deadline=$((SECONDS + grace))
while alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
if alive "$pid"; then
  log "$name (pid $pid) did not exit within ${grace}s of SIGTERM; killing it"
  kill -KILL "$pid" 2>/dev/null || true
  while alive "$pid"; do sleep 0.1; done
fi
log "$name stopped after $((SECONDS - t0))s; down for ${down}s"
sleep "$down"

mapfile -d '' argv <"$argvfile"
echo "--- restarted by restart.sh at $(date -u +%FT%TZ) ---" >>"$dir/logs/$name.log"
setsid "${argv[@]}" >>"$dir/logs/$name.log" 2>&1 </dev/null &
echo $! >"$pidfile"

# Serving again: its readiness check when up.sh recorded one, else alive for 2 s.
t1=$SECONDS
if [ -f "$dir/pids/$name.ready" ]; then
  mapfile -d '' ready <"$dir/pids/$name.ready"
  until "${ready[@]}" >/dev/null 2>&1; do
    alive "$(cat "$pidfile")" || die "$name exited after its restart; see $dir/logs/$name.log"
    ((SECONDS - t1 < 120)) || die "$name not ready 120s after its restart; see $dir/logs/$name.log"
    sleep 0.2
  done
else
  sleep 2
  alive "$(cat "$pidfile")" || die "$name exited after its restart; see $dir/logs/$name.log"
fi
log "$name serving again $((SECONDS - t1))s after its start (pid $(cat "$pidfile"))"
