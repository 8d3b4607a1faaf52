#!/usr/bin/env bash
# Builds Helm 4 from the Go module proxy, at a pinned version, into the cache, for the
# bench's comparison (`make bench-helm`); prints the binary's path. A second run finds
# it built.
set -euo pipefail
version=${ONTO_HELM_VERSION:-v4.3.1}
dir=${XDG_CACHE_HOME:-$HOME/.cache}/onto-bench/helm-$version
if [ ! -x "$dir/helm" ]; then
  echo "bench: building helm $version from the Go module proxy into $dir" >&2
  GOBIN=$dir go install -trimpath "helm.sh/helm/v4/cmd/helm@$version" >&2
fi
echo "$dir/helm"
