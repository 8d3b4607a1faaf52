/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command testimages builds the images the tests on real nodes run (internal/testimages)
// and pushes them to a registry, one line per image: reference by digest, compressed
// and uncompressed size, push time.
//
//	go run ./hack/testimages -registry 127.0.0.1:5000 [-cache DIR] [-only pause,redis]
//	go run ./hack/testimages -catalog test/releases   # the test release catalog
//	go run ./hack/testimages -catalog DIR -modes auth-service=crash   # one service misbehaving
//	go run ./hack/testimages -lock                    # re-pin the Debian packages (after apt-get update)
//
// Built images are kept under -cache (default ~/.cache/onto-testimages) as OCI layouts
// keyed by their inputs, the .deb files beside them: a second run only pushes. Run
// from the repository's root.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/coomia-dip/kubectl-onto/internal/testimages"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testimages:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("testimages", flag.ContinueOnError)
	registry := fs.String("registry", "", "registry host:port to push to (plain HTTP); empty: build only")
	cache := fs.String("cache", "", "cache directory (default ~/.cache/onto-testimages/<key>)")
	only := fs.String("only", "", "comma-separated images to build: "+strings.Join(testimages.Names, ","))
	catalog := fs.String("catalog", "", "write the test release catalog into this directory and exit")
	modes := fs.String("modes", "", "with -catalog: COMPONENT=MODE,... runs those services' misbehaving variant ("+strings.Join(testimages.SampleModes, ", ")+")")
	lock := fs.Bool("lock", false, "re-pin internal/testimages/debian.lock from apt's candidates and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(wd, "internal/testimages")); err != nil {
		return fmt.Errorf("run from the repository's root: %w", err)
	}
	if *catalog != "" {
		m := map[string]string{}
		for _, kv := range strings.Split(*modes, ",") {
			if kv == "" {
				continue
			}
			c, mode, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("-modes %q: want COMPONENT=MODE", kv)
			}
			m[c] = mode
		}
		return testimages.WriteCatalog(*catalog, wd, m)
	}
	if *cache == "" {
		home, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		*cache = filepath.Join(home, "onto-testimages")
	}
	if *lock {
		return testimages.WriteDebianLock(ctx, filepath.Join(*cache, "debs"), filepath.Join(wd, "internal/testimages/debian.lock"))
	}
	names := testimages.Names
	if *only != "" {
		names = strings.Split(*only, ",")
		for _, n := range names {
			if !slices.Contains(testimages.Names, n) {
				return fmt.Errorf("-only %s: no such image (%s)", n, strings.Join(testimages.Names, ", "))
			}
		}
	}
	b := &testimages.Builder{ModuleDir: wd, CacheDir: *cache, Stderr: os.Stderr}
	start := time.Now()
	for _, n := range names {
		built, err := b.Build(ctx, n)
		if err != nil {
			return err
		}
		how := "built"
		if built.Cached {
			how = "cached"
		}
		fmt.Fprintf(os.Stderr, "%s: %s in %s (%d tags)\n", n, how, built.Took.Round(10*time.Millisecond), len(built.Images))
		for _, t := range built.Images {
			comp, uncomp := t.Compressed, t.Uncompressed
			if *registry == "" {
				d, _ := t.Image.Digest()
				fmt.Printf("%s@%s\t%.1f MiB compressed\t%.1f MiB uncompressed\n", t.Ref(testimages.RegistryHost), d, mib(comp), mib(uncomp))
				continue
			}
			pstart := time.Now()
			ref, err := testimages.Push(ctx, *registry, t)
			if err != nil {
				return err
			}
			fmt.Printf("%s@%s\t%.1f MiB compressed\t%.1f MiB uncompressed\tpushed in %s\n", t.Ref(*registry), ref.DigestStr(), mib(comp), mib(uncomp), time.Since(pstart).Round(time.Millisecond))
		}
	}
	fmt.Fprintf(os.Stderr, "done in %s (cache %s)\n", time.Since(start).Round(10*time.Millisecond), *cache)
	return nil
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
