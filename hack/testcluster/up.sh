#!/usr/bin/env bash
# Starts the project's test control plane on 127.0.0.1 (README.md beside this script):
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok (fake nodes and
# pods, failure stages, metrics), metrics-server and a volume provisioner. Every start
# is a fresh cluster: state from an earlier run is wiped.
#
# Settings (environment):
#   ONTO_TESTCLUSTER_DIR        state dir (default: <repo>/.cluster); admin kubeconfig at $DIR/kubeconfig
#   ONTO_TESTCLUSTER_BIN        use these binaries instead of running build.sh
#   ONTO_TESTCLUSTER_GPU=0      leave out the GPU node (the "no GPU" case)
#   ONTO_TESTCLUSTER_FAST_SSD=0 leave out the fast-ssd StorageClass (the missing-class case)
#   ONTO_TESTCLUSTER_PROMETHEUS_CRDS=0 leave out the ServiceMonitor CRD
#   ONTO_TESTCLUSTER_WORKERS    number of worker nodes (default 4, spread over zones a, b, c)
#   ONTO_TESTCLUSTER_TIMEOUT    seconds to wait for readiness (default 180)
#   ONTO_TESTCLUSTER_REAL_NODES number of real nodes (kubelet + containerd, nodes.sh;
#                               default 0; needs root on Linux)
#   ONTO_TESTCLUSTER_NODE_SUBNET  10.N of the real nodes' network (default 10.250):
#                               each cluster with real nodes needs its own
#   ONTO_TESTCLUSTER_REAL_NODES_START=later  set up the nodes' network only; start
#                               them later with nodes.sh up (make test: after the
#                               tests that need no real node)
#   ONTO_TESTCLUSTER_{ETCD,ETCD_PEER,APISERVER,KCM,SCHEDULER,KWOK,METRICS}_PORT
#                               ports (defaults 23790 23800 6443 10257 10259 10247 4443)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=${ONTO_TESTCLUSTER_DIR:-$repo/.cluster}
etcd_port=${ONTO_TESTCLUSTER_ETCD_PORT:-23790}
etcd_peer_port=${ONTO_TESTCLUSTER_ETCD_PEER_PORT:-23800}
api_port=${ONTO_TESTCLUSTER_APISERVER_PORT:-6443}
kcm_port=${ONTO_TESTCLUSTER_KCM_PORT:-10257}
sched_port=${ONTO_TESTCLUSTER_SCHEDULER_PORT:-10259}
kwok_port=${ONTO_TESTCLUSTER_KWOK_PORT:-10247}
metrics_port=${ONTO_TESTCLUSTER_METRICS_PORT:-4443}
gpu=${ONTO_TESTCLUSTER_GPU:-1}
fast_ssd=${ONTO_TESTCLUSTER_FAST_SSD:-1}
workers=${ONTO_TESTCLUSTER_WORKERS:-4}
timeout=${ONTO_TESTCLUSTER_TIMEOUT:-180}
real_nodes=${ONTO_TESTCLUSTER_REAL_NODES:-0}
real_nodes_start=${ONTO_TESTCLUSTER_REAL_NODES_START:-now}
node_subnet=${ONTO_TESTCLUSTER_NODE_SUBNET:-10.250}
# Where the API server listens: loopback, or with real nodes the node network's
# gateway (a bridge this script creates), which the nodes' kubelets and pods reach.
api_host=127.0.0.1

log() { echo "testcluster: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# A live PID file means a cluster from this state dir is running: refuse rather than
# wipe the state of a cluster someone is using.
for f in "$dir"/pids/*.pid; do
  [ -e "$f" ] || continue
  if kill -0 "$(cat "$f")" 2>/dev/null; then
    die "a test cluster is already running from $dir ($(basename "$f" .pid) pid $(cat "$f")); stop it with 'make cluster-down' (or ONTO_TESTCLUSTER_DIR=$dir hack/testcluster/down.sh)"
  fi
done
# Another cluster (other state dir) or program on our ports would make the readiness
# checks below talk to the wrong server.
for p in "$etcd_port" "$etcd_peer_port" "$api_port" "$kcm_port" "$sched_port" "$kwok_port" "$metrics_port"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    die "port $p on 127.0.0.1 is in use; stop what uses it or set ONTO_TESTCLUSTER_*_PORT (see $0)"
  fi
done

bin=${ONTO_TESTCLUSTER_BIN:-$("$here/build.sh")}
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok metrics-server provisioner; do
  [ -x "$bin/$b" ] || die "$bin/$b is missing; run hack/testcluster/build.sh"
done
# kwok's stages, CRDs and metrics config ship in its module; read them from the module
# cache so they always match the kwok binary's version.
kwok_mod=$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
[ -f "$kwok_mod/kustomize/kwok/kwok.yaml" ] || die "kwok module not found in the module cache ($kwok_mod)"

if [ "$real_nodes" != 0 ]; then
  nodes_bin=${ONTO_TESTCLUSTER_NODES_BIN:-$("$here/build-nodes.sh")}
  export ONTO_TESTCLUSTER_NODES_BIN=$nodes_bin
  api_host=$node_subnet.0.1
fi

t0=$(date +%s.%N)
# Only what this script creates: make test's cluster lives in .cluster/test, inside
# the default state dir, and may be running.
rm -rf "$dir"/{etcd,pki,logs,pids,etc,volumes,bin,kubeconfig,env}
mkdir -p "$dir"/{logs,pids,etc,volumes}
ln -s "$bin" "$dir/bin"
pki=$dir/pki
ONTO_TESTCLUSTER_APISERVER_IP=$api_host "$here/pki.sh" "$pki"

# If anything below fails, stop what was already started: a half-up cluster only
# blocks the ports for the next attempt.
trap 'rc=$?; if [ $rc -ne 0 ]; then log "start failed; stopping what was started (logs in $dir/logs)"; "$here/down.sh" >&2 || true; fi' EXIT
if [ "$real_nodes" != 0 ]; then
  "$here/nodes.sh" net-up
fi

kubeconfig() { # file user cert-name
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: onto-test
  cluster:
    server: https://$api_host:$api_port
    certificate-authority: $pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $pki/$3.crt
    client-key: $pki/$3.key
contexts:
- name: onto-test
  context: {cluster: onto-test, user: $2}
current-context: onto-test
EOF
}
kubeconfig "$dir/kubeconfig" onto-admin admin
kubeconfig "$dir/etc/kcm.kubeconfig" system:kube-controller-manager kcm
kubeconfig "$dir/etc/scheduler.kubeconfig" system:kube-scheduler scheduler
kubeconfig "$dir/etc/kwok.kubeconfig" kwok kwok
kc() { "$bin/kubectl" --kubeconfig "$dir/kubeconfig" "$@"; }

start() { # name command...
  local name=$1
  shift
  # setsid: the processes outlive this script (make cluster-up returns) and do not get
  # the terminal's Ctrl-C meant for a later command. It execs, so $! is the real PID.
  setsid "$@" >"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/$name.pid"
  echo "$name" >>"$dir/pids/order"
  # Its command line, NUL-separated, for restart.sh to start it again as it was.
  printf '%s\0' "$@" >"$dir/pids/$name.argv"
}
# ready_check NAME COMMAND...: how restart.sh knows NAME is serving again.
ready_check() {
  local name=$1
  shift
  printf '%s\0' "$@" >"$dir/pids/$name.ready"
}

check_alive() {
  local f
  for f in "$dir"/pids/*.pid; do
    if ! kill -0 "$(cat "$f")" 2>/dev/null; then
      local name
      name=$(basename "$f" .pid)
      log "$name exited; last lines of $dir/logs/$name.log:"
      tail -n 20 "$dir/logs/$name.log" >&2 || true
      exit 1
    fi
  done
}

wait_until() { # what command...
  local what=$1
  shift
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    check_alive
    ((SECONDS < deadline)) || die "timed out after ${timeout}s waiting for $what (logs in $dir/logs)"
    sleep 0.2
  done
}

elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }'; }

start etcd "$bin/etcd" --name=onto-test --data-dir="$dir/etcd" \
  --listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port" \
  --listen-peer-urls="http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster="onto-test=http://127.0.0.1:$etcd_peer_port" \
  --unsafe-no-fsync --quota-backend-bytes=2147483648 --log-level=warn
ready_check etcd curl -sf "http://127.0.0.1:$etcd_port/health"
wait_until "etcd" curl -sf "http://127.0.0.1:$etcd_port/health"

# --endpoint-reconciler-type=none: the default reconciler refuses a loopback advertise
# address; with real nodes the API server is on the node network's gateway, and the
# `kubernetes` Service gets that address as its endpoint, as pods in a cluster expect.
# Kubelets are reached by InternalIP with a client certificate, their serving
# certificates checked against the cluster CA. No --enable-aggregator-routing: it
# breaks the ExternalName APIService of metrics-server. Admission plugins stay at the
# defaults (PodSecurity, ResourceQuota, ...).
reconciler=none
[ "$real_nodes" = 0 ] || reconciler=lease
start kube-apiserver "$bin/kube-apiserver" --etcd-servers="http://127.0.0.1:$etcd_port" \
  --bind-address="$api_host" --advertise-address="$api_host" --secure-port="$api_port" \
  --endpoint-reconciler-type="$reconciler" \
  --kubelet-preferred-address-types=InternalIP,Hostname \
  --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority="$pki/ca.crt" \
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" --client-ca-file="$pki/ca.crt" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --service-cluster-ip-range=10.96.0.0/16 --authorization-mode=Node,RBAC --allow-privileged=true \
  --requestheader-client-ca-file="$pki/front-proxy-ca.crt" --requestheader-allowed-names=front-proxy-client \
  --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
  --requestheader-extra-headers-prefix=X-Remote-Extra- \
  --proxy-client-cert-file="$pki/front-proxy-client.crt" --proxy-client-key-file="$pki/front-proxy-client.key"
ready_check kube-apiserver curl -sf --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "https://$api_host:$api_port/readyz"
wait_until "kube-apiserver /readyz" curl -sf --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
  "https://$api_host:$api_port/readyz"
log "kube-apiserver ready after $(elapsed)"

# HPA sync every 5 s (default 15 s) so HPA tests scale within a minute or so.
start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig="$dir/etc/kcm.kubeconfig" \
  --authentication-kubeconfig="$dir/etc/kcm.kubeconfig" --authorization-kubeconfig="$dir/etc/kcm.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$kcm_port" --leader-elect=false --use-service-account-credentials=true \
  --root-ca-file="$pki/ca.crt" --service-account-private-key-file="$pki/sa.key" \
  --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
  --horizontal-pod-autoscaler-sync-period=5s
start kube-scheduler "$bin/kube-scheduler" --kubeconfig="$dir/etc/scheduler.kubeconfig" \
  --authentication-kubeconfig="$dir/etc/scheduler.kubeconfig" --authorization-kubeconfig="$dir/etc/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$sched_port" --leader-elect=false

# kwok's CRDs must be established before kwok starts, or it does not watch Stages.
kc apply --server-side -k "$kwok_mod/kustomize/crd" >/dev/null
kc wait --for=condition=Established crd --all --timeout="${timeout}s" >/dev/null
# The full upstream kwok.yaml: a hand-written one lacks the parallelism settings
# and kwok's controllers refuse to run.
start kwok "$bin/kwok" --kubeconfig="$dir/etc/kwok.kubeconfig" --config="$kwok_mod/kustomize/kwok/kwok.yaml" \
  --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --node-ip=127.0.0.1 --node-port="$kwok_port" --server-address="127.0.0.1:$kwok_port" \
  --tls-cert-file="$pki/kwok.crt" --tls-private-key-file="$pki/kwok.key" --node-lease-duration-seconds=40
# Standalone kwok has no built-in stages: fast node/pod lifecycle, the upstream node
# chaos stage, kubelet-style resource metrics and usage from pod annotations, then ours.
{
  kc apply --server-side -k "$kwok_mod/kustomize/stage/fast"
  kc apply --server-side -f "$kwok_mod/kustomize/stage/node/chaos/node-not-ready.yaml"
  kc apply --server-side -k "$kwok_mod/kustomize/metrics/resource"
  kc apply --server-side -k "$kwok_mod/kustomize/metrics/usage"
  kc apply --server-side -f "$here/manifests/chaos-stages.yaml"
} >/dev/null

node_yaml() { # name zone cpu memory instance-type gpus
  local name=$1 zone=$2 cpu=$3 mem=$4 itype=$5 gpus=$6 idx=$7
  local gpu_res="" gpu_label="" taints=""
  if [ "$gpus" -gt 0 ]; then
    gpu_res="nvidia.com/gpu: \"$gpus\""
    gpu_label="nvidia.com/gpu.present: \"true\""
    taints="taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]"
  fi
  cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
    metrics.k8s.io/resource-metrics-path: /metrics/nodes/$name/metrics/resource
  labels:
    kubernetes.io/hostname: $name
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    node.kubernetes.io/instance-type: $itype
    topology.kubernetes.io/region: onto-local
    topology.kubernetes.io/zone: $zone
    node-role.kubernetes.io/worker: ""
    type: kwok
    $gpu_label
spec:
  podCIDR: 10.244.$idx.0/24
  podCIDRs: [10.244.$idx.0/24]
  $taints
status:
  capacity: {cpu: "$cpu", memory: $mem, pods: "110", ephemeral-storage: 100Gi${gpu_res:+, $gpu_res}}
  allocatable: {cpu: "$cpu", memory: $mem, pods: "110", ephemeral-storage: 100Gi${gpu_res:+, $gpu_res}}
  nodeInfo: {architecture: amd64, operatingSystem: linux}
EOF
}
zones=(zone-a zone-b zone-c)
{
  for ((i = 0; i < workers; i++)); do
    node_yaml "onto-worker-$i" "${zones[i % 3]}" 16 64Gi onto.standard-16 0 "$i"
  done
  if [ "$gpu" != 0 ]; then
    node_yaml onto-gpu-0 zone-b 32 128Gi onto.gpu-a100x4 4 "$workers"
  fi
} | kc apply --server-side -f - >/dev/null

kc apply --server-side -f "$here/manifests/storageclass-standard.yaml" >/dev/null
kc apply --server-side -f "$here/manifests/ingressclass-nginx.yaml" >/dev/null
if [ "$fast_ssd" != 0 ]; then
  kc apply --server-side -f "$here/manifests/storageclass-fast-ssd.yaml" >/dev/null
fi
# The Prometheus Operator's ServiceMonitor kind (a stand-in CRD): the production example
# renders one. ONTO_TESTCLUSTER_PROMETHEUS_CRDS=0 leaves it out, for the "CRD missing" case.
if [ "${ONTO_TESTCLUSTER_PROMETHEUS_CRDS:-1}" != 0 ]; then
  kc apply --server-side -f "$here/manifests/servicemonitor-crd.yaml" >/dev/null
fi
start provisioner "$bin/provisioner" --kubeconfig="$dir/kubeconfig" --root="$dir/volumes"

sed "s/METRICS_SERVER_PORT/$metrics_port/g" "$here/manifests/metrics-server.yaml" | kc apply --server-side -f - >/dev/null
# metrics-server reuses kwok's serving cert (SAN 127.0.0.1); the APIService skips TLS
# verification anyway. It scrapes kwok's fake kubelet endpoints at the node
# annotation's path on the node status port.
start metrics-server "$bin/metrics-server" --kubeconfig="$dir/kubeconfig" \
  --authentication-kubeconfig="$dir/kubeconfig" --authorization-kubeconfig="$dir/kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$metrics_port" \
  --tls-cert-file="$pki/kwok.crt" --tls-private-key-file="$pki/kwok.key" \
  --kubelet-preferred-address-types=InternalIP --kubelet-use-node-status-port --kubelet-insecure-tls \
  --metric-resolution=15s

wait_until "kube-controller-manager /healthz" curl -sfk "https://127.0.0.1:$kcm_port/healthz"
wait_until "kube-scheduler /healthz" curl -sfk "https://127.0.0.1:$sched_port/healthz"
# kubectl wait checks the nodes one after the other within its --timeout: 2 s was
# too short for the 25 nodes of ONTO_TESTCLUSTER_WORKERS=24, all Ready by then.
wait_until "all nodes Ready" kc wait --for=condition=Ready node --all --timeout=20s
log "nodes Ready after $(elapsed)"
# An unavailable aggregated API makes discovery fail for every client, so do not hand
# out the cluster before metrics.k8s.io answers.
wait_until "APIService v1beta1.metrics.k8s.io Available" \
  kc wait --for=condition=Available apiservice/v1beta1.metrics.k8s.io --timeout=2s
# The default ServiceAccount must exist before pods can be created in "default".
wait_until "default ServiceAccount" kc -n default get serviceaccount default
if [ "$real_nodes" != 0 ] && [ "$real_nodes_start" != later ]; then
  "$here/nodes.sh" up
fi

cat >"$dir/env" <<EOF
# Written by hack/testcluster/up.sh; source it to use the test cluster.
export KUBECONFIG=$dir/kubeconfig
export ONTO_TEST_KUBECONFIG=$dir/kubeconfig
# bin/ of the repo holds kubectl-onto (make build, make demo): kubectl finds it as "kubectl onto".
export PATH=$repo/bin:$dir/bin:\$PATH
EOF
trap - EXIT
stop="make cluster-down"
[ "$dir" = "$repo/.cluster" ] || stop="ONTO_TESTCLUSTER_DIR=$dir hack/testcluster/down.sh"
log "cluster ready after $(elapsed): $(kc get nodes --no-headers | wc -l) nodes, server $(kc version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -n1)"
cat >&2 <<EOF

  The test cluster is up. To use it:
    export KUBECONFIG=$dir/kubeconfig
    $dir/bin/kubectl get nodes          # kubectl v1.37.2 built with the cluster
  or: source $dir/env                   # KUBECONFIG, and PATH with kubectl and bin/kubectl-onto
  Integration tests: ONTO_TEST_KUBECONFIG=$dir/kubeconfig go test ./...
  Logs: $dir/logs/   Stop: $stop

EOF
