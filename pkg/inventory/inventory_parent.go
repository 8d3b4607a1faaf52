/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package inventory

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// NotFoundError says which OntoPlatform a command looked for and did not find, and
// what to do about it.
type NotFoundError struct {
	Namespace string
	// Name is empty when the command looked for the only platform of the namespace.
	Name string
	// CRDMissing is true when the cluster does not serve OntoPlatforms at all.
	CRDMissing bool
}

func (e *NotFoundError) Error() string {
	what := fmt.Sprintf("OntoPlatform %s/%s not found", e.Namespace, e.Name)
	if e.Name == "" {
		what = fmt.Sprintf("no OntoPlatform in namespace %s", e.Namespace)
	}
	if e.CRDMissing {
		return what + ": the cluster has no OntoPlatform CRD (nothing was ever applied with kubectl onto)"
	}
	return what + ": list them with `kubectl get ontoplatforms -A`, and pick the namespace with -n"
}

// AmbiguousError says a namespace holds several platforms and the command needs a name.
type AmbiguousError struct {
	Namespace string
	Names     []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("namespace %s holds %d OntoPlatforms (%s): name the one you mean",
		e.Namespace, len(e.Names), strings.Join(e.Names, ", "))
}

// PlatformResource returns the client of OntoPlatforms in namespace, or a
// *NotFoundError when the cluster does not serve the kind.
func PlatformResource(mapper meta.RESTMapper, dyn dynamic.Interface, namespace string) (dynamic.ResourceInterface, error) {
	gvk := v1alpha1.GroupVersionKind
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil, &NotFoundError{Namespace: namespace, CRDMissing: true}
	}
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", gvk.Kind, err)
	}
	return dyn.Resource(m.Resource).Namespace(namespace), nil
}

// Parent returns the live OntoPlatform name in namespace, the inventory's parent. An
// empty name means the only OntoPlatform of the namespace, the way a command with an
// optional NAME argument picks it. It returns a *NotFoundError or *AmbiguousError
// when there is no single platform to pick.
func (l *Lister) Parent(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error) {
	ri, err := PlatformResource(l.Mapper, l.Dynamic, namespace)
	var nf *NotFoundError
	if errors.As(err, &nf) {
		nf.Name = name
		return nil, nf
	}
	if err != nil {
		return nil, err
	}
	if name != "" {
		obj, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, &NotFoundError{Namespace: namespace, Name: name}
		}
		if err != nil {
			return nil, fmt.Errorf("get OntoPlatform %s/%s: %w", namespace, name, err)
		}
		return obj, nil
	}
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list OntoPlatforms in %s: %w", namespace, err)
	}
	switch len(list.Items) {
	case 0:
		return nil, &NotFoundError{Namespace: namespace}
	case 1:
		return &list.Items[0], nil
	}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].GetName()
	}
	sort.Strings(names)
	return nil, &AmbiguousError{Namespace: namespace, Names: names}
}

// MemberGroupKinds are the group-kinds the parent says its members may have.
func MemberGroupKinds(parent *unstructured.Unstructured) []schema.GroupKind {
	return ParseGroupKinds(parent.GetAnnotations()[ContainsGroupKindsAnnot])
}
