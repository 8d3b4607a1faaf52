#!/usr/bin/env bash
# Builds what a real node of the test cluster runs, beside the control plane that
# build.sh builds, into a content-addressed cache:
#   $ONTO_TESTCLUSTER_CACHE/nodes-<hash of the tool modules and this script>/bin
#     kubelet, kube-proxy   v1.37.2, node-k8s/ (the control plane's own module pins)
#     containerd, containerd-shim-runc-v2, ctr   v2.4.2, containerd/
#     coredns               v1.15.0 with the plugins the Corefile uses, coredns/
#     kube-router           v2.1.0, run as the NetworkPolicy controller only, kube-router/
#     registry              distribution v3 (the image registry the nodes pull from), registry/
# and installs from Debian what no Go module provides well: runc, the CNI plugins,
# iptables, ipset and conntrack (apt-get, only when missing). A second run builds
# nothing. Prints the bin directory on stdout. Needs root only for the packages.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache_root=${ONTO_TESTCLUSTER_CACHE:-$HOME/.cache/onto-testcluster}
log() { echo "testcluster: $*" >&2; }

# Debian's packages: runc 1.1 (the OCI runtime containerd's shim starts), the CNI
# plugins (bridge, host-local, loopback, portmap in /usr/lib/cni), iptables (nft
# backend) for kubelet and kube-proxy, ipset for kube-router's policies, conntrack.
need=()
command -v runc >/dev/null || need+=(runc)
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
command -v iptables >/dev/null || need+=(iptables)
command -v ipset >/dev/null || need+=(ipset)
command -v conntrack >/dev/null || need+=(conntrack)
if ((${#need[@]})); then
  [ "$(id -u)" = 0 ] || { log "ERROR: real nodes need Debian packages ${need[*]}; install them as root"; exit 1; }
  log "installing ${need[*]} from Debian"
  # An update only when the lists are missing or a day old: it takes ~10 s.
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
    apt-get update -qq >&2
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

key=$(cat "$here"/{node-k8s,containerd,coredns,kube-router,registry}/go.{mod,sum} "$here"/coredns/main.go "$here/build-nodes.sh" |
  sha256sum | cut -c1-16)
bin=$cache_root/nodes-$key/bin
tools=(kubelet kube-proxy containerd containerd-shim-runc-v2 ctr coredns kube-router registry)
built() {
  local t
  for t in "${tools[@]}"; do [ -x "$bin/$t" ] || return 1; done
}
if built; then
  echo "$bin"
  exit 0
fi
mkdir -p "$cache_root"
exec 9>"$cache_root/.build.lock"
flock 9
if built; then
  echo "$bin"
  exit 0
fi

tmp=$(mktemp -d "$cache_root/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export GOFLAGS="-trimpath -buildvcs=false -mod=mod"
start=$(date +%s)

V=v1.37.2
ldf="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldf="$ldf -X $p.gitVersion=$V -X $p.gitMajor=1 -X $p.gitMinor=37 -X $p.gitTreeState=clean -X $p.buildDate=2026-01-01T00:00:00Z"
done
log "building kubelet and kube-proxy $V (after the control plane: ~1 min; cold: ~7 min)"
(cd "$here/node-k8s" && go build -ldflags "$ldf" -o "$tmp/" k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy)

# Static, without the snapshotters that need cgo or kernel features these machines
# lack; overlayfs is the one the nodes use.
log "building containerd v2.4.2"
(cd "$here/containerd" && CGO_ENABLED=0 go build -tags "no_btrfs no_devmapper no_zfs urfave_cli_no_docs" \
  -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=v2.4.2" -o "$tmp/" \
  github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
  github.com/containerd/containerd/v2/cmd/ctr)

log "building coredns v1.15.0"
(cd "$here/coredns" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$tmp/coredns" .)

log "building kube-router v2.1.0 (its NetworkPolicy controller)"
(cd "$here/kube-router" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$tmp/kube-router" \
  github.com/cloudnativelabs/kube-router/v2/cmd/kube-router)

log "building the image registry (distribution)"
(cd "$here/registry" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$tmp/registry" \
  github.com/distribution/distribution/v3/cmd/registry)

mkdir -p "$cache_root/nodes-$key"
rm -rf "$bin"
mv "$tmp" "$bin"
trap - EXIT
log "built the node binaries in $(($(date +%s) - start))s into $bin"
echo "$bin"
