/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package spec

import (
	"errors"
	"fmt"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// NamespaceDefault says which namespace a platform goes to when its file names none,
// and whether the file may name another. The caller resolves it the way kubectl does
// (-n, else the kubeconfig context's namespace, else "default"); this package never
// reads a kubeconfig.
type NamespaceDefault struct {
	// Namespace for a platform whose file sets no metadata.namespace.
	Namespace string
	// Explicit is true when Namespace was asked for on the command line (-n). A file
	// naming another namespace is then refused, as kubectl refuses it, rather than
	// silently winning over the flag.
	Explicit bool
}

// SetNamespaces gives every platform loaded from file (a name for errors) without a
// metadata.namespace the default's namespace, and refuses a platform whose file names
// another namespace than an explicit default. Every problem is reported at once; on
// error no platform is changed, so a caller never acts on half a file.
func SetNamespaces(file string, platforms []*v1alpha1.OntoPlatform, def NamespaceDefault) error {
	var errs []error
	needsDefault := false
	for _, p := range platforms {
		switch {
		case p.Namespace == "":
			needsDefault = true
		case def.Explicit && p.Namespace != def.Namespace:
			errs = append(errs, fmt.Errorf("%s: OntoPlatform %s: the namespace from the file %q does not match the namespace %q given with -n: pass --namespace=%s, or remove metadata.namespace from the file",
				file, p.Name, p.Namespace, def.Namespace, p.Namespace))
		}
	}
	if needsDefault {
		// The file's own namespace was validated with the rest of metadata; one from
		// the command line or a kubeconfig was not, and would otherwise end up in
		// every rendered object.
		if msgs := utilvalidation.IsDNS1123Label(def.Namespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s: namespace %q for the platforms that name none: %s", file, def.Namespace, strings.Join(msgs, "; ")))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, p := range platforms {
		if p.Namespace == "" {
			p.Namespace = def.Namespace
		}
	}
	return nil
}
