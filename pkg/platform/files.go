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
	if file == "-" {
		return l.read(file)
	}
	info, err := os.Stat(file)
	if err != nil || !info.IsDir() {
		// Read reports a missing file in its own words.
		return l.read(file)
	}
	files, err := l.platformFiles(file)
	if err != nil {
		return nil, nil, err
	}
	var (
		out     []*v1alpha1.OntoPlatform
		sources []spec.Source
		errs    []error
	)
	// Every file is read, so one run names every invalid file, not the first only.
	for _, f := range files {
		platforms, srcs, err := l.read(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, platforms...)
		sources = append(sources, srcs...)
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return out, sources, nil
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
