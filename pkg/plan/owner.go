/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
)

// ForeignNamespaceError says the platform's namespace belongs to another platform's
// inventory. One namespace holds one platform: two would share object names (the
// rendered names do not carry the platform's), so the second could only fail on, or
// take over, the first one's objects.
type ForeignNamespaceError struct {
	Namespace string
	// Platform is the platform being planned, namespace/name.
	Platform string
	// Owner is the owning platform, namespace/name; empty when no OntoPlatform with
	// that inventory exists any more.
	Owner string
	// OwnerID is the inventory id the namespace is labelled with.
	OwnerID string
}

func (e *ForeignNamespaceError) Error() string {
	if e.Owner == "" {
		return fmt.Sprintf("namespace %s is labelled %s=%s by a platform that no longer exists, so %s cannot tell what there is its own; nothing was written: if nothing in the namespace belongs to another platform, remove the label (kubectl label namespace %s %s-) and re-run",
			e.Namespace, inventory.PartOfLabel, e.OwnerID, e.Platform, e.Namespace, inventory.PartOfLabel)
	}
	return fmt.Sprintf("namespace %s belongs to platform %s; one namespace holds one platform, so %s cannot be applied there; nothing was written: give it another namespace (metadata.namespace, or -n for a file without one), or uninstall %s first",
		e.Namespace, e.Owner, e.Platform, e.Owner)
}

// namespaceObject is a reference-only Namespace, for reading it.
func namespaceObject(name string) *unstructured.Unstructured {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	return ns
}

// checkNamespaceOwner fails with a *ForeignNamespaceError when ns, the live namespace
// (nil when absent), is a member of another platform's inventory.
func (pl *Planner) checkNamespaceOwner(ctx context.Context, d *Desired, ns *unstructured.Unstructured, crdExists bool) error {
	if ns == nil {
		return nil
	}
	other := ns.GetLabels()[inventory.PartOfLabel]
	if other == "" || other == d.InventoryID {
		return nil
	}
	e := &ForeignNamespaceError{Namespace: ns.GetName(), Platform: d.Namespace + "/" + d.Platform.GetName(), OwnerID: other}
	if !crdExists {
		return e
	}
	ri, err := pl.Clients.Resource(d.Platform)
	if err != nil {
		return err
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: inventory.IDLabel + "=" + other})
	if err != nil {
		return fmt.Errorf("find the platform that owns namespace %s: %w", ns.GetName(), err)
	}
	for _, item := range list.Items {
		if inventory.ID(item.GetNamespace(), item.GetName()) == other {
			e.Owner = item.GetNamespace() + "/" + item.GetName()
		}
	}
	return e
}

// platformOwners maps the inventory id of each live OntoPlatform to its
// namespace/name, so a conflict names the platform, not an opaque id.
func platformOwners(live map[string]*unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	gk := v1alpha1.GroupVersionKind.GroupKind()
	for _, o := range live {
		if o.GroupVersionKind().GroupKind() == gk {
			out[inventory.ID(o.GetNamespace(), o.GetName())] = o.GetNamespace() + "/" + o.GetName()
		}
	}
	return out
}

func isNamespace(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Namespace"
}

// CheckNamespace fails with a *ForeignNamespaceError when d's namespace belongs to
// another platform; one GET of the namespace (and, then, a list of the platforms there).
func (pl *Planner) CheckNamespace(ctx context.Context, d *Desired) error {
	ns, err := pl.getLive(ctx, namespaceObject(d.Namespace))
	if err != nil {
		return fmt.Errorf("get namespace %s: %w", d.Namespace, err)
	}
	if ns == nil || ns.GetLabels()[inventory.PartOfLabel] == "" || ns.GetLabels()[inventory.PartOfLabel] == d.InventoryID {
		return nil
	}
	crd, err := pl.getLive(ctx, d.CRD)
	if err != nil {
		return fmt.Errorf("get CRD %s: %w", d.CRD.GetName(), err)
	}
	return pl.checkNamespaceOwner(ctx, d, ns, crd != nil)
}
