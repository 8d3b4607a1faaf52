# kubectl-onto — build, test and demo targets.
# Every tool the tests need is built here from Go modules (see hack/testcluster).

SHELL := /usr/bin/env bash
# -trimpath matches the control-plane build so both share compiled packages in GOCACHE.
export GOFLAGS := -trimpath -buildvcs=false
GO ?= go
BIN_DIR := $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/coomia-dip/kubectl-onto/pkg/buildinfo.Version=$(VERSION)
# The image `watch install` runs by default: IMAGE_REPO:VERSION (the default repository is
# pkg/buildinfo's), pinned to IMAGE_DIGEST when a release knows it (make image-push prints it).
ifneq ($(IMAGE_REPO),)
LDFLAGS += -X github.com/coomia-dip/kubectl-onto/pkg/buildinfo.ImageRepository=$(IMAGE_REPO)
endif
ifneq ($(IMAGE_DIGEST),)
LDFLAGS += -X github.com/coomia-dip/kubectl-onto/pkg/buildinfo.ImageDigest=$(IMAGE_DIGEST)
endif
# The image's inputs besides the source: its labels, and every timestamp (the commit's time).
IMAGE_SOURCE ?= https://github.com/coomia-dip/kubectl-onto
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_LAYOUT := $(BIN_DIR)/image

.PHONY: all build install dist image image-push generate verify-generate docs test unit-test faults bench bench-helm bench-scale bench-watch-pod demo fmt vet lint clean

all: build

## build: compile the plugin into ./bin/kubectl-onto, with kubectl_complete-onto beside it.
## Static (CGO_ENABLED=0), as the image and the release archives are: the binary built
## here is the one shipped (a cgo build of the watch kept 19 MiB more code resident).
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/kubectl-onto ./cmd/kubectl-onto
	install -m 0755 hack/kubectl_complete-onto $(BIN_DIR)/kubectl_complete-onto

# Where `go install` puts the plugin: GOBIN, else the first GOPATH entry's bin.
INSTALL_DIR = $(or $(shell $(GO) env GOBIN),$(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin)

## install: install kubectl-onto into GOBIN so `kubectl onto` finds it on PATH, and
## kubectl_complete-onto beside it so kubectl (1.26+) completes `kubectl onto`
install:
	CGO_ENABLED=0 $(GO) install -ldflags "$(LDFLAGS)" ./cmd/kubectl-onto
	install -m 0755 hack/kubectl_complete-onto $(INSTALL_DIR)/kubectl_complete-onto
	@echo "installed kubectl-onto and kubectl_complete-onto into $(INSTALL_DIR) (it must be on PATH)"

## dist: release archives dist/kubectl-onto_<os>_<arch>.tar.gz (linux, darwin × amd64,
## arm64), dist/checksums.txt and the krew manifest dist/onto.yaml (see hack/dist.sh)
dist:
	ONTO_DIST_VERSION=$(VERSION) GO=$(GO) hack/dist.sh

## image: the watch's OCI image, linux/amd64 and linux/arm64 in one index, as the OCI
## layout bin/image (static binary, user 65532, CA roots; the same commit, the same digest)
image:
	$(GO) run ./hack/image build -ldflags "$(LDFLAGS)" -version "$(VERSION)" -revision "$(REVISION)" \
		-source "$(IMAGE_SOURCE)" -created "$(SOURCE_DATE_EPOCH)" -o $(IMAGE_LAYOUT)

## image-push: build the image and push it to IMAGE=REGISTRY/REPO[:TAG] (the tag is VERSION
## when not given; credentials from ~/.docker/config.json); prints the reference by digest
image-push:
	@test -n "$(IMAGE)" || { echo "make image-push: set IMAGE=REGISTRY/REPO[:TAG]" >&2; exit 2; }
	$(MAKE) --no-print-directory image
	$(GO) run ./hack/image push -layout $(IMAGE_LAYOUT) -image "$(IMAGE)" -version "$(VERSION)"

## generate: deepcopy functions and the CRD from the Go types in api/
generate:
	$(GO) tool controller-gen object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(GO) tool controller-gen crd paths=./api/... output:crd:artifacts:config=manifests/crd

## docs: regenerate the command reference docs/reference (one page per command) from the
## commands themselves; a unit test fails while it is stale
docs:
	$(GO) test ./cmd/kubectl-onto -run '^TestDocsReference$$' -count=1 -update

## unit-test: tests that need no cluster (integration tests skip themselves), and those of
## the sample service, a module of its own
unit-test:
	$(GO) test ./...
	cd test/sampleservice && $(GO) test ./...

## test: the whole suite — builds (or reuses) the local control plane, starts it,
## runs unit and integration tests against it, stops it
test:
	hack/test.sh

## faults: fault-injection tests (control-plane restarts, kill -9 mid-run), serially, on a cluster of their own
faults:
	hack/test.sh faults

## bench: benchmarks with figures (render, plan, apply) against the local control plane
bench:
	hack/test.sh bench

## bench-helm: install, no-op, a log-level change and teardown of the production example
## beside Helm 4 (built from the Go module proxy by hack/bench/helm.sh), whole processes
bench-helm:
	hack/test.sh helm

## bench-scale: fleets of 10, 50 and 100 tenant platforms (ONTO_BENCH_SCALE) beside
## kubectl, and the watch over them, on a 24-worker cluster of its own
bench-scale:
	hack/test.sh scale

## bench-watch-pod: the watch as a pod on a real node (the image this repo builds) over
## fleets of 10 and 100 tenant platforms (ONTO_BENCH_WATCH_POD): install to Ready, a
## drift repair and the working set the kubelet reports; as root, on a cluster of its own
bench-watch-pod:
	hack/test.sh watchpod

## demo: start a local control plane and apply the example platform to it
demo:
	hack/demo.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

## vet: go vet, then the linters (make lint)
vet:
	$(GO) vet ./...
	cd test/sampleservice && $(GO) vet ./...
	$(MAKE) --no-print-directory lint

# golangci-lint, pinned by the tool module hack/tools (its own go.mod, so the plugin's
# dependencies do not grow), built into bin/ when that go.mod changes.
GOLANGCI_LINT := $(BIN_DIR)/golangci-lint

$(GOLANGCI_LINT): hack/tools/go.mod hack/tools/go.sum
	cd hack/tools && $(GO) build -o $(GOLANGCI_LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

## lint: golangci-lint with .golangci.yml over the plugin's module; zero findings pass
lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...

clean:
	rm -rf $(BIN_DIR)

-include hack/testcluster/testcluster.mk
