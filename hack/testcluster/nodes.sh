#!/usr/bin/env bash
# Real nodes of the test cluster: kubelet + containerd + runc, kube-proxy and
# kube-router's NetworkPolicy controller, each node in a network namespace of its own,
# beside the kwok nodes (README.md beside this script). up.sh and down.sh call it.
#
#   nodes.sh net-up   the node network: bridge onto<N> with 10.<N>.0.1/24 on the host,
#                     the address the API server, the registry and CoreDNS listen on
#   nodes.sh up       the registry, CoreDNS and $ONTO_TESTCLUSTER_REAL_NODES nodes
#   nodes.sh down     the nodes, registry and CoreDNS stopped, their host changes undone
#   nodes.sh net-down the bridge removed once the API server stopped; checks that the
#                     host is as net-up found it
#
# Layout (N is the second octet of ONTO_TESTCLUSTER_NODE_SUBNET, 10.N):
#   host:   bridge onto<N> 10.N.0.1/24; route 10.N.(128+i).0/24 via node i
#   node i: netns onto<N>-<i>, eth0 10.N.0.(10+i)/24, default via 10.N.0.1;
#           pods 10.N.(128+i).0/24 on the CNI bridge cni0 inside the netns;
#           kubelet, containerd, kube-proxy, kube-router run in the host's mount
#           namespace (nsenter --net only: kubelet's volume mounts must be seen by
#           containerd) and in the node's network namespace, cgroups under /onto<N>-<i>
#
# Every change to the host is written to $dir/nodes/changes as it is made, and down
# undoes them in reverse; sysctls the kubelet changes are restored when the last
# real-node cluster of the machine stops (/run/onto-testcluster).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=${ONTO_TESTCLUSTER_DIR:-$repo/.cluster}
subnet=${ONTO_TESTCLUSTER_NODE_SUBNET:-10.250}
count=${ONTO_TESTCLUSTER_REAL_NODES:-2}
api_port=${ONTO_TESTCLUSTER_APISERVER_PORT:-6443}
registry_port=${ONTO_TESTCLUSTER_REGISTRY_PORT:-5000}
timeout=${ONTO_TESTCLUSTER_TIMEOUT:-180}
octet=${subnet#*.}
net=onto$octet
gw=$subnet.0.1
state=$dir/nodes
pki=$dir/pki
machine=/run/onto-testcluster
# The sysctls kubelet sets on start (vm.overcommit_memory, kernel.panic, ...): global,
# not per network namespace.
# Paths kubelet and the CNI plugins write whatever their configuration says: the
# container log links, the device plugin socket dir, libcni's result cache. Those that
# did not exist before net-up are removed by net-down.
host_paths=(/var/log/containers /var/lib/kubelet /var/lib/cni)
kubelet_sysctls=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes)

log() { echo "testcluster: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=lib.sh
. "$here/lib.sh"

node_name() { echo "onto-real-$1"; }
node_ip() { echo "$subnet.0.$((10 + $1))"; }
pod_cidr() { echo "$subnet.$((128 + $1)).0/24"; }
netns() { echo "$net-$1"; }
record() { echo "$*" >>"$state/changes"; }

require_root() {
  [ "$(id -u)" = 0 ] || die "real nodes need root (kubelet, containerd, network namespaces); run as root or set ONTO_TESTCLUSTER_REAL_NODES=0"
  [ "$(uname -s)" = Linux ] || die "real nodes need Linux"
}

cmd_net_up() {
  require_root
  if ip link show "$net" >/dev/null 2>&1; then
    die "network interface $net exists: another cluster uses subnet $subnet.0.0/16 (set ONTO_TESTCLUSTER_NODE_SUBNET), or an earlier run was not stopped (hack/testcluster/nodes.sh down with its ONTO_TESTCLUSTER_DIR)"
  fi
  # An earlier run that was killed before its teardown: undo what it recorded first.
  if [ -f "$state/changes" ]; then
    log "undoing the real nodes of an earlier run of $dir"
    cmd_down
    cmd_net_down
  fi
  rm -rf "$state"
  mkdir -p "$state"/pids
  snapshot "$state/host-before"
  ip link add "$net" type bridge
  record link "$net"
  ip addr add "$gw/24" dev "$net"
  ip link set "$net" up
}

# What teardown must give back, read before anything starts: compared by check_clean.
snapshot() { # dir
  mkdir -p "$1"
  ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort >"$1/links"
  ip netns list | awk '{print $1}' | sort >"$1/netns"
  ip route show | sort >"$1/routes"
  iptables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9:]*\]//' >"$1/iptables" || true
  nft list ruleset 2>/dev/null >"$1/nft" || true
  sysctl -n "${kubelet_sysctls[@]}" net.ipv4.ip_forward >"$1/sysctls" 2>/dev/null
  local p
  for p in "${host_paths[@]}"; do if [ -e "$p" ]; then echo "$p"; fi; done >"$1/paths"
}

# The machine-wide record of the kubelet's sysctls, taken by the first real-node
# cluster of the machine and given back by the last one.
sysctls_hold() {
  mkdir -p "$machine/users"
  exec 8>"$machine/.lock"
  flock 8
  if [ ! -f "$machine/sysctls" ]; then
    local s
    for s in "${kubelet_sysctls[@]}"; do echo "$s=$(sysctl -n "$s")"; done >"$machine/sysctls"
  fi
  echo "$dir" >"$machine/users/$(echo "$dir" | sha256sum | cut -c1-16)"
  flock -u 8
  record sysctls-held
}

sysctls_release() {
  [ -d "$machine/users" ] || return 0
  exec 8>"$machine/.lock"
  flock 8
  rm -f "$machine/users/$(echo "$dir" | sha256sum | cut -c1-16)"
  local u other=0
  for u in "$machine"/users/*; do
    [ -e "$u" ] || continue
    # A user whose cluster is gone (its state dir has no live kubelet) holds nothing.
    if [ -d "$(cat "$u")/nodes/pids" ] && compgen -G "$(cat "$u")/nodes/pids/kubelet-*.pid" >/dev/null; then
      other=1
    else
      rm -f "$u"
    fi
  done
  if ((other == 0)) && [ -f "$machine/sysctls" ]; then
    local line
    while IFS= read -r line; do sysctl -q -w "$line" >/dev/null; done <"$machine/sysctls"
    rm -rf "$machine"
    log "restored the sysctls kubelet changed: $(tr '\n' ' ' <"$state/host-before/sysctls" 2>/dev/null)"
  fi
  flock -u 8
}

start_proc() { # name netns|- command...
  local name=$1 ns=$2
  shift 2
  local pre=()
  [ "$ns" = - ] || pre=(nsenter "--net=/run/netns/$ns")
  # setsid and nsenter exec: $! is the process itself (lib.sh's ours checks its exe).
  setsid "${pre[@]}" "$@" >"$state/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$state/pids/$name.pid"
  echo "$name" >>"$state/pids/order"
}

wait_for() { # what command...
  local what=$1
  shift
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    local f
    for f in "$state"/pids/*.pid; do
      [ -e "$f" ] || continue
      if ! kill -0 "$(cat "$f")" 2>/dev/null; then
        local n
        n=$(basename "$f" .pid)
        log "$n exited; last lines of $state/logs/$n.log:"
        tail -n 25 "$state/logs/$n.log" >&2 || true
        exit 1
      fi
    done
    ((SECONDS < deadline)) || die "timed out after ${timeout}s waiting for $what (logs in $state/logs)"
    sleep 0.2
  done
}

cert() { # name subject extendedKeyUsage [subjectAltName]
  local name=$1 subj=$2 eku=$3 san=${4:-}
  local ext="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=$eku"
  [ -n "$san" ] && ext="$ext
subjectAltName=$san"
  openssl req -new -newkey rsa:2048 -nodes -sha256 -keyout "$name.key" -out "$name.csr" -subj "$subj" 2>/dev/null
  openssl x509 -req -sha256 -days 365 -in "$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
    -CAcreateserial -CAserial "$state/ca.srl" -out "$name.crt" -extfile <(printf '%s\n' "$ext") 2>/dev/null
  rm -f "$name.csr"
  chmod 600 "$name.key"
}

kubeconfig() { # file cert-prefix
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: onto-test
  cluster: {server: "https://$gw:$api_port", certificate-authority: "$pki/ca.crt"}
users:
- name: user
  user: {client-certificate: "$2.crt", client-key: "$2.key"}
contexts:
- name: onto-test
  context: {cluster: onto-test, user: user}
current-context: onto-test
EOF
}

cmd_up() {
  require_root
  [ -d "$state" ] || die "no node network in $state: up.sh runs 'nodes.sh net-up' before the API server"
  local bin=${ONTO_TESTCLUSTER_NODES_BIN:-$("$here/build-nodes.sh")}
  local kc=("$dir/bin/kubectl" --kubeconfig "$dir/kubeconfig")
  mkdir -p "$state"/{logs,pki,registry-data}
  sysctls_hold
  local t0=$SECONDS

  # Identities: CoreDNS and kube-router read the API with RBAC of their own
  # (manifests/real-nodes.yaml); kube-proxy is the system:kube-proxy user the default
  # system:node-proxier binding names; each kubelet is system:node:<name> (Node authorizer).
  (cd "$state/pki" && cert coredns /CN=onto:coredns clientAuth && cert kube-router /CN=onto:kube-router clientAuth &&
    cert kube-proxy /CN=system:kube-proxy clientAuth)
  kubeconfig "$state/coredns.kubeconfig" "$state/pki/coredns"
  kubeconfig "$state/kube-router.kubeconfig" "$state/pki/kube-router"
  kubeconfig "$state/kube-proxy.kubeconfig" "$state/pki/kube-proxy"
  sed -e "s/NODE_GATEWAY/$gw/g" "$here/manifests/real-nodes.yaml" | "${kc[@]}" apply --server-side -f - >/dev/null

  # The registry the kubelets pull from (image → registry → kubelet → containerd), on
  # the node network's gateway; storage in the state dir, fresh each cluster.
  cat >"$state/registry.yaml" <<EOF
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: "$state/registry-data"}
  delete: {enabled: true}
http:
  addr: "$gw:$registry_port"
EOF
  start_proc registry - "$bin/registry" serve "$state/registry.yaml"
  # Where to push (tests read it beside the kubeconfig: internal/testcluster).
  echo "$gw:$registry_port" >"$state/registry"

  # CoreDNS on the gateway, behind the kube-dns Service's hand-written EndpointSlice.
  cat >"$state/Corefile" <<EOF
.:53 {
    bind $gw
    errors
    health $gw:8053
    ready $gw:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $state/coredns.kubeconfig onto-test
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
EOF
  start_proc coredns - "$bin/coredns" -conf "$state/Corefile"

  local i
  for ((i = 0; i < count; i++)); do node_up "$i" "$bin"; done
  # Each node routes to the others' pods directly over the bridge (no forwarding on
  # the host); the host routes to every node's pods, so tests reach pod addresses.
  for ((i = 0; i < count; i++)); do
    ip route add "$(pod_cidr "$i")" via "$(node_ip "$i")" dev "$net"
    record route "$(pod_cidr "$i")" via "$(node_ip "$i")" dev "$net"
    local j
    for ((j = 0; j < count; j++)); do
      ((i == j)) || ip -n "$(netns "$i")" route add "$(pod_cidr "$j")" via "$(node_ip "$j")" dev eth0
    done
  done

  wait_for "registry on $gw:$registry_port" curl -sf "http://$gw:$registry_port/v2/"
  wait_for "CoreDNS ready" curl -sf "http://$gw:8181/ready"
  for ((i = 0; i < count; i++)); do
    wait_for "node $(node_name "$i") Ready" "${kc[@]}" wait --for=condition=Ready "node/$(node_name "$i")" --timeout=2s
    # The pod CIDR, as the node IPAM controller would set it (kube-router reads it).
    "${kc[@]}" patch node "$(node_name "$i")" --type merge -p "{\"spec\":{\"podCIDR\":\"$(pod_cidr "$i")\",\"podCIDRs\":[\"$(pod_cidr "$i")\"]}}" >/dev/null
    policy_up "$i" "$bin"
  done
  for ((i = 0; i < count; i++)); do
    wait_for "kube-router of $(node_name "$i") healthy" ip netns exec "$(netns "$i")" curl -sf http://127.0.0.1:20244/healthz
  done
  log "$count real nodes Ready after $((SECONDS - t0))s (registry $gw:$registry_port, DNS 10.96.0.10 → $gw)"
}

node_up() { # index bin
  local i=$1 bin=$2
  local name ip ns nd cidr
  name=$(node_name "$i")
  ip=$(node_ip "$i")
  ns=$(netns "$i")
  nd=$state/$name
  cidr=$(pod_cidr "$i")
  mkdir -p "$nd"/{pki,cni,certs.d,pod-logs,kubelet,ipam}

  ip netns add "$ns"
  record netns "$ns"
  ip link add "$ns" type veth peer name eth0 netns "$ns"
  record link "$ns"
  ip link set "$ns" master "$net" up
  ip -n "$ns" addr add "$ip/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip -n "$ns" route add default via "$gw"
  # Per network namespace: forwarding between the pods' bridge and eth0, and bridged
  # pod-to-pod traffic through netfilter so NetworkPolicies apply to it.
  ip netns exec "$ns" sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  # kubelet's cgroupRoot must exist in every hierarchy; a v1 cpuset starts with no
  # CPUs or memory nodes, so it gets its parent's.
  record cgroup "/$ns"
  local ctl
  for ctl in /sys/fs/cgroup/*/; do
    [ -L "${ctl%/}" ] && continue
    mkdir -p "$ctl$ns"
    if [ -f "${ctl}cpuset.cpus" ]; then
      cat "${ctl}cpuset.cpus" >"$ctl$ns/cpuset.cpus"
      cat "${ctl}cpuset.mems" >"$ctl$ns/cpuset.mems"
    fi
  done

  (cd "$nd/pki" && cert kubelet "/O=system:nodes/CN=system:node:$name" clientAuth &&
    cert serving "/CN=system:node:$name" serverAuth "IP:$ip")
  kubeconfig "$nd/kubelet.kubeconfig" "$nd/pki/kubelet"

  # Registries by name, so image references never carry the port: registry.onto.test
  # (the test images) and the operator image's default repository (ghcr.io) resolve
  # to the local registry; nothing else is reachable.
  local h
  for h in registry.onto.test ghcr.io; do
    mkdir -p "$nd/certs.d/$h"
    cat >"$nd/certs.d/$h/hosts.toml" <<EOF
server = "http://$gw:$registry_port"
[host."http://$gw:$registry_port"]
  capabilities = ["pull", "resolve"]
  skip_verify = true
EOF
  done
  cat >"$nd/cni/10-onto.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$ns",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$nd/ipam", "ranges": [[{"subnet": "$cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  # containerd 2.x (config version 3). restrict_oom_score_adj: root here lacks
  # CAP_SYS_RESOURCE, so the -998 CRI asks for the sandbox would fail every pod.
  # cgroup v1 with the cgroupfs driver; runc's state, the pods' netns mounts and the
  # CNI configuration under the node's dir, not /run and /etc.
  cat >"$nd/containerd.toml" <<EOF
version = 3
root = "$nd/containerd/root"
state = "$nd/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.blockfile", "io.containerd.snapshotter.v1.erofs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing", "io.containerd.nri.v1.nri", "io.containerd.internal.v1.opt"]
[grpc]
  address = "$nd/containerd.sock"
[ttrpc]
  address = "$nd/containerd.sock.ttrpc"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = "$nd/certs.d"
  # The pause image the tests build (internal/testimages), pushed before pods start.
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "registry.onto.test/onto/pause:3.10"
[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = true
  enable_selinux = false
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$nd/runc"
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "$nd/cni"
    max_conf_num = 1
[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
# CRI pulls through the transfer service, which reads the registry hosts from here.
[plugins.'io.containerd.transfer.v1.local']
  config_path = "$nd/certs.d"
EOF
  # Pods' DNS: only the cluster's (no upstream resolvers on these machines).
  printf 'nameserver 10.96.0.10\n' >"$nd/resolv.conf"
  cat >"$nd/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$pki/ca.crt"}
authorization: {mode: Webhook}
tlsCertFile: "$nd/pki/serving.crt"
tlsPrivateKeyFile: "$nd/pki/serving.key"
containerRuntimeEndpoint: "unix://$nd/containerd.sock"
cgroupDriver: cgroupfs
cgroupRoot: /$ns
failCgroupV1: false
failSwapOn: false
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
resolvConf: "$nd/resolv.conf"
podLogsDir: "$nd/pod-logs"
registerWithTaints:
- {key: onto.dev/real-node, value: "true", effect: NoSchedule}
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi"}
nodeStatusUpdateFrequency: 4s
shutdownGracePeriod: 0s
EOF
  cat >"$nd/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$state/kube-proxy.kubeconfig"}
hostnameOverride: $name
mode: iptables
clusterCIDR: $subnet.128.0/17
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF

  start_proc "containerd-$i" "$ns" "$bin/containerd" --config "$nd/containerd.toml"
  wait_for "containerd of $name" test -S "$nd/containerd.sock"
  start_proc "kubelet-$i" "$ns" "$bin/kubelet" --config="$nd/kubelet.yaml" --kubeconfig="$nd/kubelet.kubeconfig" \
    --root-dir="$nd/kubelet" --hostname-override="$name" --node-ip="$ip" \
    --node-labels="onto.dev/node=real,topology.kubernetes.io/zone=real-$i,node.kubernetes.io/instance-type=onto.real" \
    --v=1
  start_proc "kube-proxy-$i" "$ns" "$bin/kube-proxy" --config="$nd/kube-proxy.yaml" --v=1
}

# kube-router identifies its node through the API: started once the node is registered.
# It re-syncs its whole rule set on every pod, namespace or policy event of the
# cluster, and the suite's kwok pods make thousands: 4,031 syncs a node, 593 s, in one
# make test. At nice 10 that work waits for the control plane and the tests; a new
# policy still applies within seconds (TestRealNetworkPolicyDropsPackets).
policy_up() { # index bin
  local i=$1 bin=$2
  start_proc "kube-router-$i" "$(netns "$i")" nice -n 10 "$bin/kube-router" --kubeconfig="$state/kube-router.kubeconfig" \
    --hostname-override="$(node_name "$i")" --run-firewall=true --run-router=false --run-service-proxy=false \
    --enable-cni=false --enable-ibgp=false --enable-overlay=false --metrics-port=0 \
    --health-port=20244 --iptables-sync-period=5m --v=1
}

cmd_down() {
  [ -d "$state" ] || return 0
  local kc=("$dir/bin/kubectl" --kubeconfig "$dir/kubeconfig" --request-timeout=5s)
  # Pods first, through the API, while kubelet runs: it then stops the containers,
  # runs CNI DEL and unmounts their volumes, as on a drained node.
  if [ -f "$state/pids/order" ] && "${kc[@]}" get --raw /readyz >/dev/null 2>&1; then
    local nodes
    nodes=$("${kc[@]}" get nodes -l onto.dev/node=real -o name 2>/dev/null | sed 's#node/##' | tr '\n' ' ')
    local n
    for n in $nodes; do
      "${kc[@]}" delete pods -A --field-selector "spec.nodeName=$n" --wait=false --grace-period=1 >/dev/null 2>&1 || true
    done
    local deadline=$((SECONDS + 30))
    for n in $nodes; do
      while ((SECONDS < deadline)) && [ -n "$("${kc[@]}" get pods -A --field-selector "spec.nodeName=$n" -o name 2>/dev/null)" ]; do
        sleep 0.5
      done
    done
  fi
  # Then the processes, by PID: node agents before containerd, the host services last.
  if [ -f "$state/pids/order" ]; then
    local name pid
    for name in $(grep -E '^kube-router-' "$state/pids/order") $(grep -E '^kube-proxy-' "$state/pids/order") \
      $(grep -E '^kubelet-' "$state/pids/order") $(grep -E '^containerd-' "$state/pids/order") coredns registry; do
      [ -f "$state/pids/$name.pid" ] || continue
      pid=$(cat "$state/pids/$name.pid")
      local exe=${name%-[0-9]*}
      if ours "$exe" "$pid"; then
        kill -TERM "$pid" 2>/dev/null || true
        local deadline=$((SECONDS + 15))
        while alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
        alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
        while alive "$pid"; do sleep 0.1; done
      fi
      rm -f "$state/pids/$name.pid"
    done
    rm -f "$state/pids/order"
  fi
  # Whatever still runs in a node's cgroups (container shims and their processes)
  # is stopped by its cgroup, which is how it is found.
  local c
  if [ -f "$state/changes" ]; then
    for c in $(awk '$1 == "cgroup" {print $2}' "$state/changes"); do
      kill_cgroup "$c"
    done
  fi
  pkill -KILL -f "containerd-shim-runc-v2 .*-address $state/" 2>/dev/null || true
  # Mounts under the state dir (kubelet's volumes, its rshared root dir, containerd's
  # rootfs and netns mounts), deepest first.
  local m
  for m in $(awk -v p="$state/" 'index($5, p) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  # The recorded changes, in reverse; the node network's bridge stays for net-down:
  # the API server listens on it until it stops.
  undo keep-bridge
  # containerd 2.x puts shim sockets in /run/containerd/s whatever its config says;
  # each is named by a hash, and only live shims (none of ours now) have a listener.
  if [ -d /run/containerd/s ]; then
    local s
    for s in /run/containerd/s/*; do
      [ -S "$s" ] || continue
      if ! ss -xl 2>/dev/null | grep -qF "$s"; then rm -f "$s"; fi
    done
    rmdir /run/containerd/s /run/containerd 2>/dev/null || true
  fi
  log "real nodes stopped"
}

# undo [keep-bridge]: the recorded changes, in reverse.
undo() {
  [ -f "$state/changes" ] || return 0
  local what arg rest kept=()
  while read -r what arg rest; do
    if [ "${1:-}" = keep-bridge ] && [ "$what $arg" = "link $net" ]; then
      kept+=("$what $arg")
      continue
    fi
    case $what in
    route) ip route del "$arg" $rest 2>/dev/null || true ;;
    link) ip link del "$arg" 2>/dev/null || true ;;
    netns) ip netns del "$arg" 2>/dev/null || true ;;
    cgroup) remove_cgroup "$arg" ;;
    sysctls-held) sysctls_release ;;
    esac
  done < <(tac "$state/changes")
  if ((${#kept[@]})); then printf '%s\n' "${kept[@]}" >"$state/changes"; else rm -f "$state/changes"; fi
}

# net-down: after the control plane stopped, the bridge goes, and the host is
# compared with what net-up saw.
cmd_net_down() {
  [ -d "$state" ] || return 0
  undo
  # libcni's cached results of our networks (named after the netns), then the paths
  # that were not there before; another real-node cluster of the machine may still
  # use them, so only when none runs.
  rm -f /var/lib/cni/results/"$net"-*
  if ! compgen -G "$machine/users/*" >/dev/null; then
    local p
    for p in "${host_paths[@]}"; do
      grep -qxF "$p" "$state/host-before/paths" 2>/dev/null || rm -rf "$p"
    done
  fi
  check_clean
  log "node network removed; the host is as before"
}

kill_cgroup() { # /path: every process in it, in every v1 controller hierarchy
  local ctl pids
  for ctl in /sys/fs/cgroup/*/; do
    [ -d "$ctl${1#/}" ] || continue
    pids=$(find "$ctl${1#/}" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
  done
}

remove_cgroup() { # /path, depth first, in every hierarchy
  local ctl
  for ctl in /sys/fs/cgroup/*/; do
    [ -d "$ctl${1#/}" ] || continue
    local tries=0
    until find "$ctl${1#/}" -depth -type d -exec rmdir {} + 2>/dev/null && [ ! -d "$ctl${1#/}" ]; do
      ((++tries > 50)) && { log "could not remove cgroup $ctl${1#/}"; break; }
      sleep 0.1
    done
  done
}

# Fails when anything real nodes made is still there: compares the host with the
# snapshot net-up took.
check_clean() {
  local after=$state/host-after left=()
  snapshot "$after"
  local f
  for f in links netns routes iptables nft; do
    if ! diff -q "$state/host-before/$f" "$after/$f" >/dev/null 2>&1; then
      left+=("$f: $(diff "$state/host-before/$f" "$after/$f" | grep '^[<>]' | head -5 | tr '\n' ' ')")
    fi
  done
  # The sysctls and shared paths are only given back by the machine's last
  # real-node cluster.
  if [ ! -f "$machine/sysctls" ] && ! diff -q "$state/host-before/sysctls" "$after/sysctls" >/dev/null 2>&1; then
    left+=("sysctls: $(paste -d' ' "$state/host-before/sysctls" "$after/sysctls" | tr '\n' ';')")
  fi
  if ! compgen -G "$machine/users/*" >/dev/null && ! diff -q "$state/host-before/paths" "$after/paths" >/dev/null 2>&1; then
    left+=("paths: $(diff "$state/host-before/paths" "$after/paths" | grep '^>' | tr '\n' ' ')")
  fi
  if grep -qF " $state/" /proc/self/mountinfo; then left+=("mounts: $(grep -cF " $state/" /proc/self/mountinfo) under $state"); fi
  local c
  for c in /sys/fs/cgroup/*/"$net"-*; do [ -e "$c" ] && left+=("cgroup $c"); done
  if pgrep -f -- "$state/" >/dev/null; then left+=("processes: $(pgrep -f -- "$state/" | tr '\n' ' ')"); fi
  if ((${#left[@]})); then
    log "ERROR: real nodes left these behind:"
    printf '  %s\n' "${left[@]}" >&2
    return 1
  fi
}

case ${1:-} in
net-up) cmd_net_up ;;
net-down) cmd_net_down ;;
up) cmd_up ;;
down) cmd_down ;;
*)
  echo "usage: $0 net-up|up|down|net-down (see the top of this script)" >&2
  exit 2
  ;;
esac
