#!/usr/bin/env bash
# Stops the test cluster started by up.sh: only the processes recorded in its PID
# files, with SIGTERM in stages (clients, kube-apiserver, etcd), and SIGKILL only for
# a process still alive 20 s after its SIGTERM. State and logs
# stay in the state dir for inspection; the next up.sh wipes them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=${ONTO_TESTCLUSTER_DIR:-$repo/.cluster}
grace=${ONTO_TESTCLUSTER_STOP_GRACE:-20}

log() { echo "testcluster: $*" >&2; }

# Real nodes first, while the API server still runs: their pods are deleted through
# it, so kubelet unmounts volumes and tears down pod networks as on a drained node.
if [ -d "$dir/nodes" ]; then
  "$here/nodes.sh" down
fi

# The node network goes once the API server, which listens on it, has stopped.
if [ -d "$dir/nodes" ]; then
  trap '"$here/nodes.sh" net-down || exit 1' EXIT
fi

if [ ! -f "$dir/pids/order" ]; then
  log "no test cluster recorded in $dir; nothing to stop"
  exit 0
fi

# shellcheck source=lib.sh
. "$here/lib.sh"

names=()
pids=()
while read -r name; do
  f=$dir/pids/$name.pid
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  if ours "$name" "$pid"; then
    names=("$name" "${names[@]}")
    pids=("$pid" "${pids[@]}")
  fi
done <"$dir/pids/order"

# In stages, clients before servers: everything else, then kube-apiserver, then etcd.
# Signalled all at once, kube-apiserver loses etcd mid-shutdown and hangs on it until
# SIGKILL; in this order each exits cleanly within a second or two.
stage() { # names...: SIGTERM the recorded processes with these names (all others when none)
  local i sel=() n
  for i in "${!pids[@]}"; do
    if (($# == 0)); then
      case ${names[i]} in etcd | kube-apiserver) continue ;; esac
      sel+=("$i")
    else
      for n in "$@"; do [ "${names[i]}" = "$n" ] && sel+=("$i"); done
    fi
  done
  ((${#sel[@]})) || return 0
  for i in "${sel[@]}"; do kill -TERM "${pids[i]}" 2>/dev/null || true; done
  local deadline=$((SECONDS + grace))
  for i in "${sel[@]}"; do
    while alive "${pids[i]}" && ((SECONDS < deadline)); do sleep 0.1; done
    if alive "${pids[i]}"; then
      log "${names[i]} (pid ${pids[i]}) did not exit within ${grace}s of SIGTERM; killing it (its state is not needed: the next up.sh starts afresh)"
      kill -KILL "${pids[i]}" 2>/dev/null || true
    fi
  done
}
stage
stage kube-apiserver
stage etcd
# Return only once they are gone, so a following up.sh finds the ports free.
for i in "${!pids[@]}"; do
  while alive "${pids[i]}"; do sleep 0.1; done
done
rm -f "$dir"/pids/*.pid "$dir"/pids/*.argv "$dir"/pids/*.ready "$dir/pids/order"
log "stopped ${#pids[@]} processes"
