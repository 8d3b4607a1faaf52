/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// platformFileExts are the extensions of the files read from a directory, as kubectl
// reads them.
var platformFileExts = []string{".yaml", ".yml", ".json"}

// readAll is Read of file, or of every platform file of the directory file, with
// where each platform came from.
func (l *Loader) readAll(file string) ([]*v1alpha1.OntoPlatform, []spec.Source, error) {
	files, err := l.ReadFiles(file)
	if err != nil {
		return nil, nil, err
	}
	var (
		out     []*v1alpha1.OntoPlatform
		sources []spec.Source
		errs    []error
	)
	for _, f := range files {
		if f.Err != nil {
			errs = append(errs, f.Err)
			continue
		}
		out = append(out, f.Platforms...)
		sources = append(sources, f.sources...)
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return out, sources, nil
}

// FileResult is one platform file as ReadFiles read it.
type FileResult struct {
	// File is the file's name as errors give it (InputName).
	File string
	// Platforms are its platforms, defaulted, validated and in their namespace; nil
	// when Err is set.
	Platforms []*v1alpha1.OntoPlatform
	// Err is why the file cannot be used: a *spec.Error when it is invalid.
	Err error

	sources []spec.Source
}

// ReadFiles is Read of file, or, when file is a directory, of each of its platform
// files (*.yaml, *.yml, *.json in name order; Recursive: those of its subdirectories
// too), one result per file, so that a caller names every invalid file and each
// issue's file, not the first file only. The error is the directory's own (unreadable,
// holding no platform file); a file's is in its result.
func (l *Loader) ReadFiles(file string) ([]FileResult, error) {
	files := []string{file}
	if file != "-" {
		// A missing file is Read's to report, in its own words.
		if info, err := os.Stat(file); err == nil && info.IsDir() {
			if files, err = l.platformFiles(file); err != nil {
				return nil, err
			}
		}
	}
	out := make([]FileResult, 0, len(files))
	for _, f := range files {
		platforms, sources, err := l.read(f)
		out = append(out, FileResult{File: InputName(f), Platforms: platforms, Err: err, sources: sources})
	}
	return out, nil
}

// DistinctNamespaces refuses two platforms of files in one namespace, as Load does:
// one namespace holds one platform.
func DistinctNamespaces(files []FileResult) error {
	var all []*v1alpha1.OntoPlatform
	for _, f := range files {
		all = append(all, f.Platforms...)
	}
	return distinctNamespaces(all)
}

// platformFiles lists the platform files of dir in name order.
func (l *Loader) platformFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if path != dir && !l.Recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if isPlatformFile(path) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", dir, err)
	}
	if len(files) == 0 {
		hint := ""
		if !l.Recursive {
			hint = " (-R reads its subdirectories too)"
		}
		return nil, fmt.Errorf("%s holds no %s file%s", dir, strings.Join(platformFileExts, ", "), hint)
	}
	return files, nil
}

func isPlatformFile(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range platformFileExts {
		if ext == e {
			return true
		}
	}
	return false
}

// distinctNamespaces refuses two platforms in one namespace: one namespace holds one
// platform, and two runs of one input would otherwise race for it (each sees the
// namespace free before the other creates it).
func distinctNamespaces(platforms []*v1alpha1.OntoPlatform) error {
	seen := map[string]string{}
	var errs []error
	for _, p := range platforms {
		if other, ok := seen[p.Namespace]; ok {
			if other == p.Name {
				errs = append(errs, fmt.Errorf("OntoPlatform %s/%s is given twice: each platform may appear once", p.Namespace, p.Name))
			} else {
				errs = append(errs, fmt.Errorf("OntoPlatforms %s and %s are both in namespace %s: one namespace holds one platform; give each its own metadata.namespace", other, p.Name, p.Namespace))
			}
			continue
		}
		seen[p.Namespace] = p.Name
	}
	return errors.Join(errs...)
}
