# kubectl-onto — build, test and demo targets.
# Every tool the tests need is built here from Go modules (see hack/testcluster).

SHELL := /usr/bin/env bash
# -trimpath matches the control-plane build so both share compiled packages in GOCACHE.
export GOFLAGS := -trimpath -buildvcs=false
GO ?= go
BIN_DIR := $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/coomia-dip/kubectl-onto/pkg/buildinfo.Version=$(VERSION)

.PHONY: all build install generate verify-generate test unit-test bench demo fmt vet clean

all: build

## build: compile the plugin into ./bin/kubectl-onto
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/kubectl-onto ./cmd/kubectl-onto

## install: install kubectl-onto into GOBIN so `kubectl onto` finds it on PATH
install:
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/kubectl-onto

## generate: deepcopy functions and the CRD from the Go types in api/
generate:
	$(GO) tool controller-gen object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(GO) tool controller-gen crd paths=./api/... output:crd:artifacts:config=manifests/crd

## unit-test: tests that need no cluster (integration tests skip themselves)
unit-test:
	$(GO) test ./...

## test: the whole suite — builds (or reuses) the local control plane, starts it,
## runs unit and integration tests against it, stops it
test:
	hack/test.sh

## bench: benchmarks with figures (render, plan, apply) against the local control plane
bench:
	hack/test.sh bench

## demo: start a local control plane and apply the example platform to it
demo:
	hack/demo.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

clean:
	rm -rf $(BIN_DIR)

-include hack/testcluster/testcluster.mk
