# Test control plane targets (included by the root Makefile). See hack/testcluster/up.sh
# for the settings (ports, ONTO_TESTCLUSTER_GPU=0, ONTO_TESTCLUSTER_FAST_SSD=0, ...).

.PHONY: cluster-build cluster-up cluster-down cluster-status

## cluster-build: build (or reuse from ~/.cache/onto-testcluster) the control-plane binaries
cluster-build:
	@hack/testcluster/build.sh

## cluster-up: start a fresh local test cluster; admin kubeconfig in .cluster/kubeconfig
cluster-up:
	hack/testcluster/up.sh

## cluster-down: stop the local test cluster (by PID: SIGTERM, then SIGKILL)
cluster-down:
	hack/testcluster/down.sh

## cluster-status: show the processes and nodes of the local test cluster
cluster-status:
	@hack/testcluster/status.sh
