#!/usr/bin/env bash
# Shows whether the test cluster's processes run (with their RSS) and its nodes.
# Exits 1 if no process of it runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=${ONTO_TESTCLUSTER_DIR:-$repo/.cluster}

if [ ! -f "$dir/pids/order" ]; then
  echo "no test cluster running from $dir (start one with 'make cluster-up')"
  exit 1
fi
running=0
total=0
printf '%-24s %8s %10s\n' PROCESS PID RSS
while read -r name; do
  pid=$(cat "$dir/pids/$name.pid" 2>/dev/null || echo -)
  if [ "$pid" != - ] && kill -0 "$pid" 2>/dev/null; then
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
    total=$((total + rss))
    running=$((running + 1))
    printf '%-24s %8s %7d MB\n' "$name" "$pid" $((rss / 1024))
  else
    printf '%-24s %8s %10s\n' "$name" "$pid" stopped
  fi
done <"$dir/pids/order"
printf '%-24s %8s %7d MB\n' total "" $((total / 1024))
[ "$running" -gt 0 ] || exit 1
echo
"$dir/bin/kubectl" --kubeconfig "$dir/kubeconfig" get nodes -L topology.kubernetes.io/zone -L nvidia.com/gpu.present
