/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package status

import (
	"context"
	"errors"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
)

// ObserveAll reports every platform in namespace ("" is every namespace), sorted by
// namespace and name, each read as Observe reads one. It makes one list request for
// the platforms and one per workload kind, whatever their number, so it stays cheap
// with a hundred tenants. A cluster that does not serve OntoPlatforms has none.
func (o *Observer) ObserveAll(ctx context.Context, namespace string) ([]*Report, error) {
	ri, err := inventory.PlatformResource(o.Clients.Mapper, o.Clients.Dynamic, namespace)
	var notFound *inventory.NotFoundError
	if errors.As(err, &notFound) {
		return []*Report{}, nil
	}
	if err != nil {
		return nil, err
	}
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list OntoPlatforms: %w", err)
	}
	reports := []*Report{}
	if len(list.Items) == 0 {
		return reports, nil
	}
	live, err := o.lister().ListMembers(ctx, namespace, workloadKinds())
	if err != nil {
		return nil, err
	}
	byID := map[string][]*unstructured.Unstructured{}
	for _, w := range live {
		byID[inventory.PartOf(w)] = append(byID[inventory.PartOf(w)], w)
	}
	now := metav1.NewTime(o.now())
	for i := range list.Items {
		var p v1alpha1.OntoPlatform
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &p); err != nil {
			return nil, fmt.Errorf("decode OntoPlatform %s/%s: %w", list.Items[i].GetNamespace(), list.Items[i].GetName(), err)
		}
		r := join(&p, byID[inventory.ID(p.Namespace, p.Name)]).report
		r.ObservedAt = now
		reports = append(reports, r)
	}
	sort.Slice(reports, func(i, j int) bool {
		if reports[i].Namespace != reports[j].Namespace {
			return reports[i].Namespace < reports[j].Namespace
		}
		return reports[i].Name < reports[j].Name
	})
	return reports, nil
}
