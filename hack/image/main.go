/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command image builds the watch's OCI image (make image) and pushes it (make
// image-push), with internal/image:
//
//	go run ./hack/image build -ldflags "$(LDFLAGS)" -version V -revision SHA -source URL -created EPOCH -o bin/image
//	go run ./hack/image push -layout bin/image -image REGISTRY/REPO[:TAG] -version V
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"time"

	"github.com/coomia-dip/kubectl-onto/internal/image"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build|push [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	var err error
	switch os.Args[1] {
	case "build":
		err = build(ctx, os.Args[2:])
	case "push":
		err = push(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: build or push", os.Args[1])
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func build(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ExitOnError)
	ldflags := fs.String("ldflags", "", "linker flags of the binaries (the version's -X among them)")
	version := fs.String("version", "", "version: the image's tag and org.opencontainers.image.version")
	revision := fs.String("revision", "", "commit: org.opencontainers.image.revision")
	source := fs.String("source", "", "repository URL: org.opencontainers.image.source")
	created := fs.String("created", "0", "every timestamp of the image, in seconds since the epoch (SOURCE_DATE_EPOCH)")
	out := fs.String("o", "bin/image", "OCI image layout directory to write")
	_ = fs.Parse(args)
	epoch, err := strconv.ParseInt(*created, 10, 64)
	if err != nil {
		return fmt.Errorf("-created %q: %w", *created, err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	start := time.Now()
	bins, err := image.Compile(ctx, image.CompileOptions{
		ModuleDir: wd, LDFlags: *ldflags, OutDir: filepath.Join(filepath.Dir(*out), "image-binaries"), Stderr: os.Stderr,
	})
	if err != nil {
		return err
	}
	compiled := time.Since(start)
	idx, err := image.Build(image.Options{Binaries: bins, Version: *version, Revision: *revision, Source: *source, Created: time.Unix(epoch, 0)})
	if err != nil {
		return err
	}
	if err := image.WriteLayout(*out, idx, *version); err != nil {
		return fmt.Errorf("write %s: %w", *out, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	fmt.Printf("%s: image index %s (version %s), compiled in %s, built in %s\n", *out, d, *version,
		compiled.Round(100*time.Millisecond), (time.Since(start) - compiled).Round(100*time.Millisecond))
	for _, desc := range m.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return err
		}
		size, err := image.CompressedSize(img)
		if err != nil {
			return err
		}
		fmt.Printf("  %s %s %.1f MiB compressed\n", desc.Platform, desc.Digest, float64(size)/(1<<20))
	}
	return nil
}

func push(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("push", flag.ExitOnError)
	dir := fs.String("layout", "bin/image", "OCI image layout directory written by build")
	ref := fs.String("image", "", "REGISTRY/REPO[:TAG] to push to; the tag is -version when not given")
	version := fs.String("version", "", "tag when -image has none")
	_ = fs.Parse(args)
	if *ref == "" {
		return fmt.Errorf("-image REGISTRY/REPO[:TAG] is required")
	}
	idx, err := image.ReadLayout(*dir)
	if err != nil {
		return err
	}
	if *version == "" {
		anns, err := idx.IndexManifest()
		if err != nil {
			return err
		}
		*version = anns.Annotations[image.AnnotationVersion]
	}
	d, err := image.Push(ctx, *ref, *version, idx)
	if err != nil {
		return err
	}
	fmt.Println(d.String())
	return nil
}
