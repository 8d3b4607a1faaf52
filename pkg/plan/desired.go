/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"fmt"
	"maps"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/manifests"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// PlaneLabel records on every object the plane it belongs to, so prune and uninstall
// can order objects the platform no longer renders.
const PlaneLabel = v1alpha1.LabelPlane

// Desired is everything one apply writes: the CRD, the OntoPlatform object (the
// inventory's parent) and each plane's objects, labelled as inventory members.
type Desired struct {
	// CRD is shared by every Desired of the process (compiledCRD): read, never changed.
	CRD         *unstructured.Unstructured
	Platform    *unstructured.Unstructured
	Planes      []render.Plane
	InventoryID string
	// Namespace of the platform and of every namespaced object.
	Namespace string
	Version   string
	// UserSecrets are the Secrets the spec names that the platform's pods read but
	// the platform does not create (external services' credentials): a plan checks
	// that they exist with their keys, and apply refuses to write until they do.
	UserSecrets []UserSecret
	// IngressTLSSecrets are the Secrets the rendered Ingresses serve TLS with that the
	// platform does not get created: a plan warns of those missing.
	IngressTLSSecrets []IngressTLSSecret
}

// compiledCRD is the OntoPlatform CRD compiled into the binary, decoded once per
// process: its YAML decodes to about 0.5 MB of maps, which a watch held once per
// platform otherwise (docs/benchmarks.md).
var compiledCRD = sync.OnceValues(func() (*unstructured.Unstructured, error) {
	data, err := manifests.FS.ReadFile(manifests.CRDPath)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		return nil, fmt.Errorf("decode CRD: %w", err)
	}
	return obj, nil
})

// CRD returns the OntoPlatform CRD compiled into the binary: a copy of its own for
// the caller.
func CRD() (*unstructured.Unstructured, error) {
	crd, err := compiledCRD()
	if err != nil {
		return nil, err
	}
	return crd.DeepCopy(), nil
}

// NewDesired prepares what applying p writes. planes are copied, not changed.
func NewDesired(p *v1alpha1.OntoPlatform, planes []render.Plane) (*Desired, error) {
	crd, err := compiledCRD()
	if err != nil {
		return nil, err
	}
	id := inventory.ID(p.Namespace, p.Name)
	d := &Desired{CRD: crd, InventoryID: id, Namespace: p.Namespace, Version: p.Spec.Version, UserSecrets: userSecrets(p, planes),
		IngressTLSSecrets: ingressTLSSecrets(planes)}
	var all []*unstructured.Unstructured
	for _, pl := range planes {
		cp := render.Plane{Name: pl.Name, Objects: make([]*unstructured.Unstructured, len(pl.Objects))}
		for i, o := range pl.Objects {
			o = o.DeepCopy()
			inventory.Label(o, id)
			labels := o.GetLabels()
			labels[PlaneLabel] = string(pl.Name)
			o.SetLabels(labels)
			cp.Objects[i] = o
			all = append(all, o)
		}
		d.Planes = append(d.Planes, cp)
	}
	d.Platform, err = parentObject(p, id, inventory.FormatGroupKinds(inventory.GroupKinds(all)))
	if err != nil {
		return nil, err
	}
	return d, nil
}

// parentObject is the OntoPlatform as applied: metadata, the ApplySet parent labels
// and annotations, and the spec. Status is written separately.
func parentObject(p *v1alpha1.OntoPlatform, id, groupKinds string) (*unstructured.Unstructured, error) {
	specMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p.Spec)
	if err != nil {
		return nil, fmt.Errorf("convert spec: %w", err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": specMap}}
	obj.SetGroupVersionKind(v1alpha1.GroupVersionKind)
	obj.SetName(p.Name)
	obj.SetNamespace(p.Namespace)
	labels := maps.Clone(p.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[inventory.IDLabel] = id
	obj.SetLabels(labels)
	ann := maps.Clone(p.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	// kubectl's last-applied annotation would make kubectl treat the object as its own.
	delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
	ann[inventory.ToolingAnnotation] = inventory.Tooling
	ann[inventory.ContainsGroupKindsAnnot] = groupKinds
	obj.SetAnnotations(ann)
	return obj, nil
}

// Objects lists every plane object, in apply order.
func (d *Desired) Objects() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, p := range d.Planes {
		out = append(out, p.Objects...)
	}
	return out
}

// IsGenerated reports whether obj is a Secret whose values apply generates once, in the
// cluster; such a Secret is created when absent and never updated.
func IsGenerated(obj *unstructured.Unstructured) bool {
	_, ok := obj.GetAnnotations()[render.AnnotationGenerateKeys]
	return ok && isSecret(obj)
}

// GeneratedKeys are the keys whose values apply generates for a generated Secret.
func GeneratedKeys(obj *unstructured.Unstructured) []string {
	var out []string
	for _, k := range strings.Split(obj.GetAnnotations()[render.AnnotationGenerateKeys], ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// planGenerated plans a generated Secret: created when absent; when present, its values
// are never changed, but keys a newer release added are (an update that adds only
// those, shown masked).
func planGenerated(obj, live *unstructured.Unstructured) Change {
	if live == nil {
		return createChange(obj)
	}
	ch := Change{Action: ActionUnchanged, Object: RefOf(obj), ResourceVersion: live.GetResourceVersion()}
	data, _, _ := unstructured.NestedMap(live.Object, "data")
	for _, k := range GeneratedKeys(obj) {
		if _, ok := data[k]; !ok {
			ch.Fields = append(ch.Fields, FieldChange{Path: "data." + k, New: Masked})
		}
	}
	if len(ch.Fields) > 0 {
		ch.Action, ch.Desired = ActionUpdate, obj
	}
	return ch
}
