#!/usr/bin/env bash
# `make test` / `make bench`: builds (or reuses) the test control plane, starts a fresh
# cluster, runs the whole Go suite against it (unit and integration tests), stops it.
#
#   hack/test.sh          go test ./...
#   hack/test.sh faults   go test -tags faults -p 1 ./test/faults/...: tests that
#                         restart control-plane components, on a cluster of their own
#   hack/test.sh bench    go test -run '^$' -bench . -benchmem ./..., then
#                         go run ./hack/bench: plan and apply vs kubectl side by side,
#                         medians and ratios in one run (flags: ONTO_BENCH_FLAGS)
#   hack/test.sh helm     go run ./hack/bench -helm: install, no-op, a config change
#                         and teardown beside Helm 4 (built by hack/bench/helm.sh)
#   hack/test.sh scale    go run ./hack/bench -scale 10,50,100: fleets of tenant
#                         platforms beside kubectl, and the watch over them, on a
#                         cluster of its own with 24 workers (ONTO_BENCH_SCALE sets
#                         the sizes)
#   hack/test.sh watchpod go run ./hack/bench -watch-pod 10,100: the watch as a pod
#                         on a real node over fleets of tenant platforms, on a
#                         cluster of its own with 24 workers and 2 real nodes (as
#                         root; ONTO_BENCH_WATCH_POD sets the sizes)
#
# Environment:
#   ONTO_TEST_KUBECONFIG  if set, use that running cluster and start none
#                         (e.g. after `make cluster-up`: source .cluster/env)
#   ONTO_TEST_PKGS        packages to test (default ./...)
#   ONTO_GO_TEST_FLAGS    extra go test flags (e.g. -run TestX -v)
#   ONTO_TEST_PARALLEL    parallel tests per package (default 2)
#   ONTO_TESTCLUSTER_*    cluster settings, see hack/testcluster/up.sh
# The cluster's state and logs go to .cluster/test, on ports of its own, apart from a
# `make cluster-up` one.
set -euo pipefail
# Everything is in main, called on the last line: bash reads a script as it runs, and
# this one runs for many minutes in a work tree others edit; a function is parsed whole
# before it starts.
main() {
  repo=$(cd "$(dirname "$0")/.." && pwd)
  cd "$repo"
  mode=${1:-test}
  # Same flags as the Makefile and build.sh when run directly: -trimpath is part of the
  # compile cache key, and sharing it with the control-plane build saves minutes.
  export GOFLAGS=${GOFLAGS:--trimpath -buildvcs=false}
  pkgs=${ONTO_TEST_PKGS:-./...}
  # shellcheck disable=SC2206 # word splitting of the flags is intended
  extra=(${ONTO_GO_TEST_FLAGS:-})

  log() { echo "test.sh: $*" >&2; }
  # The images the real nodes run (internal/testimages: the pause image, the sample
  # service, redis and postgres from Debian's packages, MinIO from its module (its
  # cold build takes ~11 min on 2 cores), a Kafka-protocol broker from franz-go's
  # kfake), built once and cached in
  # ~/.cache/onto-testimages, pushed to the cluster's registry: the path users take,
  # image → registry → kubelet → containerd. $1: which, comma-separated.
  push_test_images() {
    go build -o "$ONTO_TESTCLUSTER_DIR/testimages" ./hack/testimages
    "$ONTO_TESTCLUSTER_DIR/testimages" -registry "$(cat "$ONTO_TESTCLUSTER_DIR/nodes/registry")" -only "$1" >/dev/null
  }
  t0=$SECONDS

  if [ -z "${ONTO_TEST_KUBECONFIG:-}" ]; then
    ONTO_TESTCLUSTER_BIN=$(hack/testcluster/build.sh)
    export ONTO_TESTCLUSTER_BIN
    log "control plane binaries ready after $((SECONDS - t0))s ($ONTO_TESTCLUSTER_BIN)"
    # A state dir and ports of their own, so the suite runs beside a `make demo` /
    # `make cluster-up` cluster on the default ports; the fault tests, which restart
    # the control plane, on yet another (their offset: +2000).
    off=0
    export ONTO_TESTCLUSTER_DIR=$repo/.cluster/test
    if [ "$mode" = faults ]; then
      off=2000
      export ONTO_TESTCLUSTER_DIR=$repo/.cluster/faults
    fi
    # 100 tenants of the tenant example request about 1,200 pods, 330 CPU and 1 TiB:
    # 24 workers of 16 cpu / 64Gi / 110 pods hold them.
    if [ "$mode" = scale ]; then
      off=4000
      export ONTO_TESTCLUSTER_DIR=$repo/.cluster/scale
      export ONTO_TESTCLUSTER_WORKERS=${ONTO_TESTCLUSTER_WORKERS:-24}
    fi
    if [ "$mode" = watchpod ]; then
      off=6000
      export ONTO_TESTCLUSTER_DIR=$repo/.cluster/watchpod
      export ONTO_TESTCLUSTER_WORKERS=${ONTO_TESTCLUSTER_WORKERS:-24}
    fi
    # etcd's ports are below Linux's ephemeral range (32768-60999): while etcd is down
    # (a fault test's restart), the API server's redials of a port inside it can
    # connect to themselves, and the restarted etcd then fails with "address already
    # in use" (it did, on 35790).
    export ONTO_TESTCLUSTER_ETCD_PORT=${ONTO_TESTCLUSTER_ETCD_PORT:-$((13790 + off))}
    export ONTO_TESTCLUSTER_ETCD_PEER_PORT=${ONTO_TESTCLUSTER_ETCD_PEER_PORT:-$((13800 + off))}
    export ONTO_TESTCLUSTER_APISERVER_PORT=${ONTO_TESTCLUSTER_APISERVER_PORT:-$((16443 + off))}
    export ONTO_TESTCLUSTER_KCM_PORT=${ONTO_TESTCLUSTER_KCM_PORT:-$((20257 + off))}
    export ONTO_TESTCLUSTER_SCHEDULER_PORT=${ONTO_TESTCLUSTER_SCHEDULER_PORT:-$((20259 + off))}
    export ONTO_TESTCLUSTER_KWOK_PORT=${ONTO_TESTCLUSTER_KWOK_PORT:-$((20247 + off))}
    export ONTO_TESTCLUSTER_METRICS_PORT=${ONTO_TESTCLUSTER_METRICS_PORT:-$((14443 + off))}
    # Real nodes (kubelet + containerd, hack/testcluster/nodes.sh) for the tests of
    # what really runs; on a network of their own (10.251), beside a demo's (10.250).
    # They need root: ONTO_TESTCLUSTER_REAL_NODES=0 leaves them out, and the tests
    # that need them then skip, saying so; with them expected and missing, those fail.
    # They start after the other tests (see below), so up.sh only sets up their network.
    if [ "$mode" = test ]; then
      export ONTO_TESTCLUSTER_REAL_NODES=${ONTO_TESTCLUSTER_REAL_NODES:-2}
      export ONTO_TESTCLUSTER_NODE_SUBNET=${ONTO_TESTCLUSTER_NODE_SUBNET:-10.251}
      export ONTO_TESTCLUSTER_REAL_NODES_START=later
      if [ "$ONTO_TESTCLUSTER_REAL_NODES" != 0 ] && [ "$(id -u)" != 0 ]; then
        log "real nodes need root: run make test as root, or ONTO_TESTCLUSTER_REAL_NODES=0 make test to leave them (and their tests) out"
        exit 1
      fi
    elif [ "$mode" = watchpod ]; then
      export ONTO_TESTCLUSTER_REAL_NODES=2 ONTO_TESTCLUSTER_NODE_SUBNET=10.254
    else
      export ONTO_TESTCLUSTER_REAL_NODES=0
    fi
    hack/testcluster/up.sh
    # Stop the cluster however this script ends (failure, Ctrl-C); the exit status stays
    # go test's. Set only once up.sh succeeded: when it refuses (another run's cluster
    # is up in this state dir), stopping "our" cluster would stop that run's. up.sh
    # cleans up a half-started cluster itself.
    trap 'hack/testcluster/down.sh' EXIT
    export ONTO_TEST_KUBECONFIG=$ONTO_TESTCLUSTER_DIR/kubeconfig
  else
    log "using the running cluster of ONTO_TEST_KUBECONFIG=$ONTO_TEST_KUBECONFIG"
  fi

  t1=$SECONDS
  case $mode in
  watchpod)
    rc=0
    push_test_images pause
    go run ./hack/bench -kubeconfig "$ONTO_TEST_KUBECONFIG" -watch-pod "${ONTO_BENCH_WATCH_POD:-10,100}" || rc=$?
    ;;
  test)
    # -count=1: results depend on the cluster, never reuse cached ones.
    # 30m: well inside CI's 90 min, and a hung watch fails instead of eating the budget.
    # -parallel: 2 (go's default here) measured as fast as 4 on 2 cores (9:37 vs 9:25
    # wall): the control plane, not the tests' waiting, is what is busy.
    rc=0
    # The linters first (golangci-lint, .golangci.yml): a finding fails the run.
    make --no-print-directory lint || rc=$?
    # Every test runs: one that would skip (no cluster, no tool) fails instead
    # (internal/mustrun).
    export ONTO_TEST_NO_SKIP=1
    gotest() { go test -count=1 -timeout 30m -parallel "${ONTO_TEST_PARALLEL:-2}" "${extra[@]}" "$@" $pkgs; }
    # The sample service (test/sampleservice) is a module of its own; its unit tests
    # need no cluster.
    if [ "$pkgs" = ./... ]; then
      (cd test/sampleservice && go test -count=1 ./...) || rc=$?
    fi
    if [ "${ONTO_TESTCLUSTER_REAL_NODES_START:-}" = later ] && [ "$ONTO_TESTCLUSTER_REAL_NODES" != 0 ]; then
      # Two phases on one cluster. First every test but the real-node ones (named
      # TestReal…, testcluster.RealTestPrefix), with no node started: kubelets,
      # kube-proxies and kube-routers following the thousands of simulated pods
      # those tests create took the API server's second core (go test 1258 s
      # against 840 s without them). A test that asks for real nodes under another
      # name fails here, since the nodes are expected and absent.
      gotest -skip '^TestReal' || rc=$?
      t2=$SECONDS
      hack/testcluster/nodes.sh up
      push_test_images pause,kafka,redis,postgres,minio,sample-service
      log "real nodes up and test images pushed in $((SECONDS - t2))s"
      gotest -run '^TestReal' || rc=$?
    elif [ "${ONTO_TESTCLUSTER_REAL_NODES:-}" = 0 ]; then
      log "real-node tests (TestReal…) left out: ONTO_TESTCLUSTER_REAL_NODES=0"
      gotest -skip '^TestReal' || rc=$?
    else
      gotest || rc=$?
    fi
    ;;
  bench)
    rc=0
    # The linters first (golangci-lint, .golangci.yml): a finding fails the run.
    make --no-print-directory lint || rc=$?
    go test -count=1 -timeout 30m -run '^$' -bench . -benchmem "${extra[@]}" $pkgs || rc=$?
    # The same figures side by side with kubectl, medians and ratios: the cluster's own
    # kubectl (bin/ beside its kubeconfig) unless ONTO_KUBECTL names one.
    # shellcheck disable=SC2206 # word splitting of the flags is intended
    bench_flags=(${ONTO_BENCH_FLAGS:-})
    go run ./hack/bench -kubeconfig "$ONTO_TEST_KUBECONFIG" "${bench_flags[@]}" || rc=$?
    ;;
  helm)
    rc=0
    helm_bin=$(hack/bench/helm.sh)
    # shellcheck disable=SC2206 # word splitting of the flags is intended
    bench_flags=(${ONTO_BENCH_FLAGS:-})
    go run ./hack/bench -kubeconfig "$ONTO_TEST_KUBECONFIG" -helm "$helm_bin" "${bench_flags[@]}" || rc=$?
    ;;
  scale)
    rc=0
    # shellcheck disable=SC2206 # word splitting of the flags is intended
    bench_flags=(${ONTO_BENCH_FLAGS:-})
    go run ./hack/bench -kubeconfig "$ONTO_TEST_KUBECONFIG" -scale "${ONTO_BENCH_SCALE:-10,50,100}" "${bench_flags[@]}" || rc=$?
    ;;
  faults)
    # Serial (-p 1; only the kill points of one test run in parallel, none beside a
    # restart): a restarted API server or etcd disturbs every test running beside it.
    rc=0
    # 180m: the kill-at-every-event tests install, change, upgrade and uninstall a
    # platform once per event of the run they kill (about 55, 40, 250 and 45 events), 4 kill points at a
    # time (ONTO_FAULTS_PARALLEL); ONTO_FAULTS_KILL_POINTS=N-M[,N-M…] runs only some.
    # Each scenario appends its row (re-runs, their wall time and writes, leftovers).
    export ONTO_FAULTS_REPORT=$repo/.cluster/faults-report.md
    : >"$ONTO_FAULTS_REPORT"
    go test -count=1 -timeout 180m -tags faults -p 1 -parallel "${ONTO_FAULTS_PARALLEL:-4}" "${extra[@]}" ./test/faults/... || rc=$?
    {
      echo
      echo "| scenario | re-runs converged | re-run wall, median (max) | objects the re-run wrote, median (max) | left behind |"
      echo "|---|---|---|---|---|"
      cat "$ONTO_FAULTS_REPORT"
    } >&2
    ;;
  *)
    log "unknown mode $mode (want: test, bench, helm, scale, watchpod or faults)"
    exit 2
    ;;
  esac
  log "go test took $((SECONDS - t1))s, $((SECONDS - t0))s in all (exit $rc)"
  exit "$rc"
}

main "$@"
