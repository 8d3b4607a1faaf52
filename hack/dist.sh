#!/usr/bin/env bash
# `make dist`: the release archives of kubectl-onto and its krew manifest.
#
# For each platform it builds a static binary (CGO_ENABLED=0, -trimpath, the version
# stamped with -ldflags) and packs it, with kubectl_complete-onto (kubectl's completion
# of `kubectl onto`) and the licence (README.md while the repository has no LICENSE),
# into kubectl-onto_<os>_<arch>.tar.gz. Then it writes checksums.txt (sha256) and
# onto.yaml, the krew manifest, whose URIs point at the GitHub release of the version.
# Builds and archives are reproducible: the same commit gives the same checksums.
#
# Environment:
#   ONTO_DIST_VERSION    the version (default: git describe --tags --always --dirty).
#                        krew wants v<semver>: a tag 1.2.3 or v1.2.3 gives v1.2.3, a
#                        commit with no tag (abc1234, abc1234-dirty) v0.0.0-abc1234[-dirty]
#   ONTO_DIST_PLATFORMS  os/arch pairs, space or comma separated
#                        (default: linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
#   ONTO_DIST_DIR        where to write (default: dist)
#   GO                   the go command (default: go)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
GO=${GO:-go}
out=${ONTO_DIST_DIR:-$repo/dist}
platforms=${ONTO_DIST_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
platforms=${platforms//,/ }
module=github.com/coomia-dip/kubectl-onto
log() { echo "dist: $*" >&2; }
die() { log "$*"; exit 1; }

# krew_version turns a git describe output or a tag into the v-prefixed semantic
# version krew requires, or fails.
krew_version() {
  local raw=$1 v
  case $raw in
    v[0-9]*.*.* | [0-9]*.*.*) v=v${raw#v} ;;
    '') v=v0.0.0-dev ;;
    *) v=v0.0.0-$raw ;;
  esac
  # semver.org's grammar: a numeric pre-release identifier has no leading zero, so a
  # commit id of digits only starting with 0 gets git describe's "g" prefix.
  local num='(0|[1-9][0-9]*)' id='(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)'
  local re="^v$num\\.$num\\.$num(-$id(\\.$id)*)?(\\+[0-9a-zA-Z-]+(\\.[0-9a-zA-Z-]+)*)?\$"
  if ! [[ $v =~ $re ]] && [[ $v == v0.0.0-* ]]; then
    v=v0.0.0-g${v#v0.0.0-}
  fi
  [[ $v =~ $re ]] || die "version $raw is not a semantic version (krew needs v<major>.<minor>.<patch>[-pre])"
  echo "$v"
}

raw=${ONTO_DIST_VERSION:-$(git describe --tags --always --dirty 2>/dev/null || true)}
version=$(krew_version "$raw")
# Archive entries get the commit's time, so the archives are reproducible.
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
license=LICENSE
[ -f "$license" ] || license=README.md

if command -v sha256sum >/dev/null; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
else
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
fi
tar_flags=()
if tar --version 2>/dev/null | grep -q 'GNU tar'; then
  tar_flags=(--sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch")
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out"
rm -f "$out"/kubectl-onto_*.tar.gz "$out/checksums.txt" "$out/onto.yaml"

ldflags="-s -w -X $module/pkg/buildinfo.Version=$version"
files=(kubectl-onto kubectl_complete-onto "$license")
archives=()
for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  [[ $p == */* && -n $os && -n $arch ]] || die "platform $p is not os/arch"
  name=kubectl-onto_${os}_${arch}
  log "building $name ($version)"
  dir=$stage/$name
  mkdir -p "$dir"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -trimpath -buildvcs=false -ldflags "$ldflags" \
    -o "$dir/kubectl-onto" ./cmd/kubectl-onto
  cp hack/kubectl_complete-onto "$dir/"
  cp "$license" "$dir/"
  chmod 0755 "$dir/kubectl-onto" "$dir/kubectl_complete-onto"
  chmod 0644 "$dir/$license"
  tar "${tar_flags[@]}" -C "$dir" -cf - "${files[@]}" | gzip -n >"$out/$name.tar.gz"
  archives+=("$name")
done

(cd "$out" && for a in "${archives[@]}"; do echo "$(sha256 "$a.tar.gz")  $a.tar.gz"; done) >"$out/checksums.txt"

{
  cat <<EOF
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: onto
spec:
  version: "$version"
  homepage: https://$module
  shortDescription: Install, upgrade and heal an OntoPlatform
  description: |
    kubectl onto installs, upgrades, scales, diagnoses and heals a whole
    multi-service platform on Kubernetes from one declarative OntoPlatform file.
    It validates the file offline, renders every object plane by plane, plans the
    change with a server-side apply dry-run, applies each plane with server-side
    apply and waits until it is healthy before the next, prunes what it no longer
    renders, and records status and history on the OntoPlatform itself.
  caveats: |
    Shell completion of \`kubectl onto\` (kubectl 1.26 or newer) needs an executable
    kubectl_complete-onto on PATH, which krew does not install. To add it:

      printf '#!/usr/bin/env sh\nexec kubectl-onto __complete "\$@"\n' \\
        >"\${KREW_ROOT:-\$HOME/.krew}/bin/kubectl_complete-onto"
      chmod +x "\${KREW_ROOT:-\$HOME/.krew}/bin/kubectl_complete-onto"
  platforms:
EOF
  for a in "${archives[@]}"; do
    os=${a#kubectl-onto_} arch=${a##*_}
    os=${os%_*}
    cat <<EOF
  - selector:
      matchLabels:
        os: $os
        arch: $arch
    uri: https://$module/releases/download/$version/$a.tar.gz
    sha256: $(sha256 "$out/$a.tar.gz")
    bin: kubectl-onto
    files:
EOF
    for f in "${files[@]}"; do
      printf '    - from: %s\n      to: .\n' "$f"
    done
  done
} >"$out/onto.yaml"

log "wrote $out: ${archives[*]/%/.tar.gz} checksums.txt onto.yaml"
