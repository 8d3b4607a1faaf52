#!/usr/bin/env bash
# `make demo`: the whole main job on this machine. Builds kubectl-onto and the local
# control plane (from Go modules; the first build takes ~8-12 min on 2 cores, later ones
# seconds), starts the control plane on 127.0.0.1 unless one is already running, applies
# the article's production example (examples/platform.yaml) with progress, and shows
# its status. Run it again to see an apply that changes nothing.
#
# Environment: ONTO_DEMO_FILE (default examples/platform.yaml), and the cluster settings
# of hack/testcluster/up.sh (ports, ONTO_TESTCLUSTER_GPU=0, ...).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
export GOFLAGS=${GOFLAGS:--trimpath -buildvcs=false}
file=${ONTO_DEMO_FILE:-examples/platform.yaml}
dir=${ONTO_TESTCLUSTER_DIR:-$repo/.cluster}
export ONTO_TESTCLUSTER_DIR=$dir
log() { echo "demo: $*" >&2; }

log "building bin/kubectl-onto"
make -s --no-print-directory build   # stamps the version (git describe); adds kubectl_complete-onto

ONTO_TESTCLUSTER_BIN=$(hack/testcluster/build.sh)
export ONTO_TESTCLUSTER_BIN
if [ -f "$dir/kubeconfig" ] && "$ONTO_TESTCLUSTER_BIN/kubectl" --kubeconfig "$dir/kubeconfig" get --raw /readyz >/dev/null 2>&1; then
  log "reusing the running cluster of $dir"
else
  hack/testcluster/up.sh
fi
export KUBECONFIG=$dir/kubeconfig

log "kubectl onto apply -f $file"
bin/kubectl-onto apply -f "$file"
name=$(sed -n 's/^  name: *//p' "$file" | head -1)
ns=$(sed -n 's/^  namespace: *//p' "$file" | head -1)
bin/kubectl-onto status "$name" -n "$ns"

cat >&2 <<MSG

demo: the platform runs on the local control plane (simulated nodes and pods, by kwok).
  source $dir/env                                  # KUBECONFIG, kubectl and bin/kubectl-onto on PATH
  kubectl onto status -n $ns
  kubectl get onto,deploy,sts,hpa,pdb -n $ns       # kubectl v1.37.2 built with the cluster
  kubectl onto plan -f $file                       # nothing to change
  kubectl onto upgrade $name -n $ns --to 1.6.0     # component by component, behind canaries
  make cluster-down                                # stop the control plane
MSG
