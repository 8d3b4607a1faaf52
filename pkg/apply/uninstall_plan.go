/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// DryRunStrategy is how a command that writes pretends to.
type DryRunStrategy string

// Dry-run strategies, as kubectl names them.
const (
	DryRunNone DryRunStrategy = "none"
	// DryRunClient sends no write at all.
	DryRunClient DryRunStrategy = "client"
	// DryRunServer sends each delete with dryRun=All, so the API server checks it.
	DryRunServer DryRunStrategy = "server"
)

// UninstallOptions tune one uninstall.
type UninstallOptions struct {
	// DeleteData also deletes the PersistentVolumeClaims of the platform's
	// StatefulSets, its generated Secrets and, when the inventory owns it and it holds
	// nothing else, its namespace.
	DeleteData bool
	DryRun     DryRunStrategy
	// PlaneTimeout bounds the wait for each plane's objects to be gone.
	PlaneTimeout time.Duration
	// LockTTL, LockWait and Holder are the lock lease's, as for Apply.
	LockTTL  time.Duration
	LockWait time.Duration
	Holder   string
	// Finalizing is the watch reconciler's uninstall of an OntoPlatform being deleted:
	// everything but the OntoPlatform goes, and the caller then removes its finalizer,
	// which lets the deletion finish.
	Finalizing bool
}

// Finalizer is the watch reconciler's finalizer on an OntoPlatform: deleting the
// object runs the ordered uninstall first. The CLI's uninstall removes it too, after
// its own, so nothing hangs Terminating when no reconciler runs.
const Finalizer = "onto.paas/uninstall"

// instanceLabel carries the platform name on every object it renders, PVCs made from
// volumeClaimTemplates included (they carry no inventory label).
const instanceLabel = v1alpha1.LabelInstance

// Plane names of the uninstall steps that are not platform planes.
const (
	// UnlabelledPlane groups inventory members without a plane label; they go first.
	UnlabelledPlane = "unlabelled"
	// DataStep deletes PersistentVolumeClaims and generated Secrets (--delete-data).
	DataStep = "persistent-data"
	// namespaceStep deletes the namespace apply created (--delete-data), last.
	namespaceStep = "namespace"
)

// UninstallPlan is what an uninstall deletes, in order, and what it keeps. Its JSON
// field names are part of the CLI's interface (`uninstall --dry-run -o json`).
type UninstallPlan struct {
	Platform    plan.ObjectRef `json:"platform"`
	InventoryID string         `json:"inventoryID"`
	DeleteData  bool           `json:"deleteData"`
	// Steps in deletion order: platform planes in reverse install order, then the
	// platform's data (with DeleteData), then the OntoPlatform, then the namespace.
	// Steps of the same Stage are deleted together (the service planes).
	Steps []UninstallStep `json:"steps"`
	// Kept lists what stays, and why.
	Kept []KeptObject `json:"kept,omitempty"`

	live map[plan.ObjectRef]*unstructured.Unstructured
}

// UninstallStep is one plane's objects. Steps of one stage are deleted together; the
// next stage starts when every object of the stage is gone.
type UninstallStep struct {
	Plane string `json:"plane"`
	// Stage numbers the steps' order from 1: the service planes (every plane after
	// infrastructure, and objects of no plane) share one, as nothing of theirs waits
	// for another's to stop; infrastructure goes once they are gone, then tenancy,
	// the data, the OntoPlatform and the namespace, each a stage of its own.
	Stage   int              `json:"stage"`
	Objects []plan.ObjectRef `json:"objects"`
}

// StagePlanes is the planes of each stage, in order.
func (p *UninstallPlan) StagePlanes() [][]string {
	var out [][]string
	for _, stage := range p.Stages() {
		planes := make([]string, len(stage))
		for i, s := range stage {
			planes[i] = s.Plane
		}
		out = append(out, planes)
	}
	return out
}

// Stages groups the plan's steps by stage, in order.
func (p *UninstallPlan) Stages() [][]UninstallStep {
	var out [][]UninstallStep
	for i, s := range p.Steps {
		if i > 0 && s.Stage == p.Steps[i-1].Stage {
			out[len(out)-1] = append(out[len(out)-1], s)
			continue
		}
		out = append(out, []UninstallStep{s})
	}
	return out
}

// KeptObject is an object uninstall leaves in place.
type KeptObject struct {
	Object plan.ObjectRef `json:"object"`
	Reason string         `json:"reason"`
}

// Count is how many objects the plan deletes.
func (p *UninstallPlan) Count() int {
	n := 0
	for _, s := range p.Steps {
		n += len(s.Objects)
	}
	return n
}

// PlanUninstall finds the platform name in namespace (the only one when name is
// empty) and its inventory, and decides what uninstalling it deletes. It writes
// nothing. Only objects labelled as members of the platform's inventory are ever in
// the plan, with two exceptions under DeleteData: the PersistentVolumeClaims its
// StatefulSets made (they carry the platform's instance label, not the inventory's),
// and the namespace, which goes only when the inventory owns it and it holds no object
// the platform does not own.
func (a *Applier) PlanUninstall(ctx context.Context, namespace, name string, opts UninstallOptions) (*UninstallPlan, error) {
	l := &inventory.Lister{Dynamic: a.Clients.Dynamic, Mapper: a.Clients.Mapper}
	parent, err := l.Parent(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	ns, name := parent.GetNamespace(), parent.GetName()
	id := inventory.ID(ns, name)
	members, err := l.List(ctx, ns, id, inventory.MemberGroupKinds(parent))
	if err != nil {
		return nil, err
	}
	p := &UninstallPlan{Platform: plan.RefOf(parent), InventoryID: id, DeleteData: opts.DeleteData,
		live: map[plan.ObjectRef]*unstructured.Unstructured{plan.RefOf(parent): parent}}

	byPlane := map[string][]*unstructured.Unstructured{}
	var data []*unstructured.Unstructured
	var nsObj *unstructured.Unstructured
	for _, m := range members {
		if m.GetLabels()[inventory.PartOfLabel] != id {
			continue // never anything the inventory does not own
		}
		ref := plan.RefOf(m)
		switch {
		case ref.Group == "" && ref.Kind == "Namespace" && ref.Name == ns:
			nsObj = m
		case ref.Group == "" && ref.Kind == "PersistentVolumeClaim":
			data = append(data, m)
		case plan.IsGenerated(m), plan.IsCertificateAuthority(m):
			data = append(data, m)
		default:
			plane := m.GetLabels()[plan.PlaneLabel]
			if !slices.Contains(v1alpha1.Planes(), v1alpha1.Plane(plane)) {
				plane = UnlabelledPlane
			}
			byPlane[plane] = append(byPlane[plane], m)
		}
	}

	// Anything without a known plane first: nothing of the platform depends on it.
	order := []string{UnlabelledPlane}
	planes := v1alpha1.Planes()
	for i := len(planes) - 1; i >= 0; i-- {
		order = append(order, string(planes[i]))
	}
	for _, plane := range order {
		if objs := byPlane[plane]; len(objs) > 0 {
			p.addStep(plane, objs, servicePlane(plane))
		}
	}

	pvcs, err := a.Clients.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=" + name})
	if err != nil {
		return nil, fmt.Errorf("list PersistentVolumeClaims of %s/%s: %w", ns, name, err)
	}
	claimPrefixes := statefulSetClaimPrefixes(members, id)
	for i := range pvcs.Items {
		// The instance label alone could be another tool's (a Helm release of the same
		// name): only claims of this inventory's StatefulSets are the platform's data.
		if !isClaimOf(pvcs.Items[i].Name, claimPrefixes) {
			continue
		}
		u := pvcObject(&pvcs.Items[i])
		if !slices.ContainsFunc(data, func(d *unstructured.Unstructured) bool { return d.GetUID() == u.GetUID() }) {
			data = append(data, u)
		}
	}
	sortObjects(data)
	if opts.DeleteData {
		if len(data) > 0 {
			p.addStep(DataStep, data, false)
		}
	} else {
		for _, d := range data {
			p.Kept = append(p.Kept, KeptObject{Object: plan.RefOf(d), Reason: keptReason(d)})
		}
	}
	if !opts.Finalizing {
		p.addStep(plan.PlatformPlane, []*unstructured.Unstructured{parent}, false)
	}

	if nsObj != nil {
		// Kept or not, the uninstall needs it: a kept one leaves the inventory.
		p.live[plan.RefOf(nsObj)] = nsObj
		switch {
		case !opts.DeleteData:
			p.Kept = append(p.Kept, KeptObject{Object: plan.RefOf(nsObj), Reason: "the platform's namespace is kept unless --delete-data"})
		case nsObj.GetAnnotations()[CreatedByAnnotation] != name:
			p.Kept = append(p.Kept, KeptObject{Object: plan.RefOf(nsObj), Reason: "the namespace existed before the platform was installed (apply did not create it): delete it yourself if nothing else needs it"})
		default:
			foreign, err := a.foreignObjects(ctx, ns, id, name)
			if err != nil {
				return nil, err
			}
			if len(foreign) > 0 {
				more := ""
				if len(foreign) > 3 {
					more = fmt.Sprintf(" and %d more", len(foreign)-3)
					foreign = foreign[:3]
				}
				p.Kept = append(p.Kept, KeptObject{Object: plan.RefOf(nsObj),
					Reason: fmt.Sprintf("it holds objects this platform does not own: %s%s", strings.Join(foreign, ", "), more)})
			} else {
				p.addStep(namespaceStep, []*unstructured.Unstructured{nsObj}, false)
			}
		}
	}
	return p, nil
}

// servicePlane reports whether plane's objects may be deleted together with the other
// service planes': those after infrastructure in install order, and objects of no
// plane. Their workloads use infrastructure, and tenancy holds everyone's policies
// and quota, so those two keep their own stages, in reverse install order.
func servicePlane(plane string) bool {
	switch v1alpha1.Plane(plane) {
	case v1alpha1.PlaneInfrastructure, v1alpha1.PlaneTenancy:
		return false
	}
	return plane == UnlabelledPlane || slices.Contains(v1alpha1.Planes(), v1alpha1.Plane(plane))
}

// addStep appends plane's objects as a step: in the previous step's stage when
// together and that step is a service plane's too, else in a stage of its own.
func (p *UninstallPlan) addStep(plane string, objs []*unstructured.Unstructured, together bool) {
	sortObjects(objs)
	stage := 1
	if n := len(p.Steps); n > 0 {
		last := p.Steps[n-1]
		stage = last.Stage + 1
		if together && servicePlane(last.Plane) {
			stage = last.Stage
		}
	}
	step := UninstallStep{Plane: plane, Stage: stage}
	for _, o := range objs {
		ref := plan.RefOf(o)
		step.Objects = append(step.Objects, ref)
		p.live[ref] = o
	}
	p.Steps = append(p.Steps, step)
}

func keptReason(obj *unstructured.Unstructured) string {
	if obj.GetKind() == "PersistentVolumeClaim" {
		return "volume data is kept unless --delete-data"
	}
	return "generated credentials are kept unless --delete-data"
}

func sortObjects(objs []*unstructured.Unstructured) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := plan.RefOf(objs[i]), plan.RefOf(objs[j])
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
}

func pvcObject(pvc *corev1.PersistentVolumeClaim) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("PersistentVolumeClaim")
	u.SetNamespace(pvc.Namespace)
	u.SetName(pvc.Name)
	u.SetUID(pvc.UID)
	u.SetLabels(pvc.Labels)
	return u
}

// foreignObjects lists the objects in namespace that deleting it would destroy though
// the platform does not own them: everything except inventory members, the
// platform's PVCs, dependents (they have owner references), and what Kubernetes puts
// in every namespace or derives from other objects.
func (a *Applier) foreignObjects(ctx context.Context, namespace, id, name string) ([]string, error) {
	lists, err := a.Clients.Kube.Discovery().ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discover namespaced resources: %w", err)
	}
	var out []string
	var failed *discovery.ErrGroupDiscoveryFailed
	if errors.As(err, &failed) {
		// An API group that cannot be listed may hold anything: the namespace stays.
		for gv := range failed.Groups {
			out = append(out, "whatever "+gv.String()+" holds (that API cannot be listed now)")
		}
	}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			if derivedKind(gv.Group, r.Kind) {
				continue
			}
			list, err := a.Clients.Dynamic.Resource(gv.WithResource(r.Name)).Namespace(namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				if meta.IsNoMatchError(err) {
					continue
				}
				return nil, fmt.Errorf("list %s in %s: %w", r.Name, namespace, err)
			}
			for _, o := range list.Items {
				labels := o.GetLabels()
				switch {
				case labels[inventory.PartOfLabel] == id,
					r.Kind == "PersistentVolumeClaim" && gv.Group == "" && labels[instanceLabel] == name,
					len(o.GetOwnerReferences()) > 0,
					defaultObject(gv.Group, r.Kind, o.GetName(), name):
					continue
				}
				out = append(out, r.Kind+" "+o.GetName())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// derivedKind is a kind whose objects Kubernetes derives from others or that records
// history, so it never holds something a user would miss.
func derivedKind(group, kind string) bool {
	switch {
	case group == "" && (kind == "Event" || kind == "Endpoints"),
		group == "events.k8s.io" && kind == "Event",
		group == "discovery.k8s.io" && kind == "EndpointSlice",
		group == "authorization.k8s.io", group == "authentication.k8s.io":
		return true
	}
	return false
}

// defaultObject is an object Kubernetes creates in every namespace, this tool's own
// lock lease, or the platform itself (the inventory's parent, deleted before).
func defaultObject(group, kind, objName, platform string) bool {
	switch {
	case group == "" && kind == "ServiceAccount" && objName == "default",
		group == "" && kind == "ConfigMap" && objName == "kube-root-ca.crt",
		group == "coordination.k8s.io" && kind == "Lease" && objName == LockName(platform),
		group == v1alpha1.GroupVersion.Group && kind == v1alpha1.Kind && objName == platform:
		return true
	}
	return false
}

// statefulSetClaimPrefixes are "<template>-<statefulset>-" for every volume claim
// template of the inventory's StatefulSets: the StatefulSet controller names each claim
// it creates that, followed by the pod's ordinal.
func statefulSetClaimPrefixes(members []*unstructured.Unstructured, id string) []string {
	var out []string
	for _, m := range members {
		if gvk := m.GroupVersionKind(); gvk.Group != "apps" || gvk.Kind != "StatefulSet" || m.GetLabels()[inventory.PartOfLabel] != id {
			continue
		}
		templates, _, _ := unstructured.NestedSlice(m.Object, "spec", "volumeClaimTemplates")
		for _, t := range templates {
			tm, _ := t.(map[string]any)
			name, _, _ := unstructured.NestedString(tm, "metadata", "name")
			if name != "" {
				out = append(out, name+"-"+m.GetName()+"-")
			}
		}
	}
	return out
}

// isClaimOf reports whether a claim name is a prefix followed by an ordinal.
func isClaimOf(claim string, prefixes []string) bool {
	for _, p := range prefixes {
		rest, ok := strings.CutPrefix(claim, p)
		if ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}
