/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
)

// FieldManager is the server-side apply field manager of every write this tool makes.
const FieldManager = "kubectl-onto"

// DefaultConcurrency bounds the dry-runs in flight at once.
const DefaultConcurrency = 8

// Planner computes plans against one cluster.
type Planner struct {
	Clients *kube.Clients
	// KeepGoing leaves an object the API server refuses to plan out of the plan, as
	// unchanged, and records it in Plan.Failed, instead of failing the plan: the
	// watch repairs everything else and says what it could not.
	KeepGoing bool
	// FieldManager of the dry-runs; FieldManager when empty.
	FieldManager string
	// Concurrency of dry-runs; DefaultConcurrency when 0.
	Concurrency int
	// Adopt takes over live objects with a rendered name that belong to no platform,
	// instead of reporting them as conflicts.
	Adopt bool
	// Only, when set, limits the dry runs to the objects it accepts: any other object
	// that exists is taken as unchanged without a request (objects that do not exist
	// are still planned as creates). An upgrade's step plans only the component it
	// moves; the step that ends it plans everything.
	Only func(*unstructured.Unstructured) bool
	// Unchanged, when it returns true for an object and its live copy, takes the
	// object as unchanged without a dry-run: the watch's periodic pass, for objects
	// whose resourceVersion has not moved since a plan found them unchanged.
	Unchanged func(obj, live *unstructured.Unstructured) bool
	// KeepPlatformObjects plans the CRD and the OntoPlatform as unchanged when they
	// exist, without a request: the watch reconciler never writes them (users and
	// GitOps own the spec), and the CRD's dry-run is a plan's slowest request.
	KeepPlatformObjects bool
	// Live is where the live objects are read; the API server when nil. The watch
	// passes its informers' cache, so a pass over an unchanged platform reads nothing
	// from the API server.
	Live LiveSource
	// Now is the clock certificates are checked against (re-issued within 30 days of
	// their end); time.Now when nil.
	Now func() time.Time
	// Lists, when set, keeps every whole list of a kind in the platform's namespace
	// the plan read, so what runs after it (apply's health check of an unchanged
	// platform) reads those objects instead of asking again.
	Lists *Lists
	// Shared, when set (and Live is not), are the live objects of every platform of
	// the run, listed once for all of them (plan and apply of a directory).
	Shared *SharedLists
}

// Plan compares d with the cluster: one server-side apply dry-run per object, one list
// per kind for the live objects and the inventory. Objects in a namespace that does not
// exist yet cannot be dry-run; they are creates, validated when apply re-plans after
// creating the namespace. Nothing is written.
func (pl *Planner) Plan(ctx context.Context, d *Desired) (*Plan, error) {
	p := &Plan{
		Platform:    RefOf(d.Platform),
		Version:     d.Version,
		InventoryID: d.InventoryID,
	}

	// The CRD first: without it the OntoPlatform and, without the namespace, every
	// namespaced object can only be a create, and a dry-run of them would fail. Whether
	// it exists is all the rest needs; its dry-run, the slowest request of a plan (the
	// API server checks the whole schema), runs alongside everything else.
	crdLive, err := pl.getLive(ctx, d.CRD)
	if err != nil {
		return nil, fmt.Errorf("plan CRD %s: %w", d.CRD.GetName(), err)
	}
	crdExists := crdLive != nil
	// Whose namespace it is comes before any dry-run: a second platform in a namespace
	// would otherwise fail on whichever of its objects the API server rejects first
	// (an immutable StatefulSet field), far from the cause.
	ns, err := pl.getLive(ctx, namespaceObject(d.Namespace))
	if err != nil {
		return nil, fmt.Errorf("get namespace %s: %w", d.Namespace, err)
	}
	if err := pl.checkNamespaceOwner(ctx, d, ns, crdExists); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pl.concurrency())
	defer func() { _ = g.Wait() }()
	defer cancel() // first: an early return stops the dry-runs in flight, then waits for them
	platformPlane := PlanePlan{Name: PlatformPlane, Changes: []Change{createChange(d.CRD), createChange(d.Platform)}}
	if crdExists && pl.KeepPlatformObjects {
		platformPlane.Changes[0] = Change{Object: RefOf(d.CRD), ResourceVersion: crdLive.GetResourceVersion(), Action: ActionUnchanged}
	} else if crdExists {
		g.Go(func() error {
			ch, err := pl.planObject(gctx, d.CRD, crdLive, "", nil)
			if err != nil {
				return fmt.Errorf("plan CRD %s: %w", d.CRD.GetName(), err)
			}
			platformPlane.Changes[0] = ch
			return nil
		})
	}
	if err := pl.checkServed(d); err != nil {
		return nil, err
	}

	live, err := pl.liveObjects(ctx, d, ns)
	if err != nil {
		return nil, err
	}
	if err := checkDataLayouts(d.Objects(), live); err != nil {
		return nil, err
	}
	nsExists := ns != nil
	if p.MissingSecrets, err = pl.missingSecrets(ctx, d, nsExists); err != nil {
		return nil, err
	}
	ingressTLS, err := pl.ingressTLSWarnings(ctx, d, nsExists)
	if err != nil {
		return nil, err
	}
	owners := platformOwners(live)
	if parent := live[RefOf(d.Platform).key()]; parent != nil {
		p.InstalledVersion, _, _ = unstructured.NestedString(parent.Object, "status", "version")
		p.UpgradeTo, _, _ = unstructured.NestedString(parent.Object, "status", "upgrade", "to")
	}

	if parent := live[RefOf(d.Platform).key()]; parent != nil && pl.KeepPlatformObjects {
		platformPlane.Changes[1] = inventoryChange(d.Platform, parent)
	} else if crdExists && nsExists {
		g.Go(func() error {
			ch, err := pl.planObject(gctx, d.Platform, live[RefOf(d.Platform).key()], "", nil)
			if err != nil {
				return fmt.Errorf("plan %s: %w", RefOf(d.Platform), err)
			}
			platformPlane.Changes[1] = ch
			return nil
		})
	}

	// Every plane object, concurrently; results keep the rendered order.
	objs := d.Objects()
	changes := make([]Change, len(objs))
	// Warnings of certificates re-issued, by object, so they keep the rendered order.
	reissues := make([]string, len(objs))
	failed := make([]*ObjectFailure, len(objs))
	for i, obj := range objs {
		g.Go(func() error {
			ref := RefOf(obj)
			liveObj := live[ref.key()]
			switch {
			case obj.GetNamespace() != "" && !nsExists:
				changes[i] = createChange(obj)
			case IsCertificate(obj):
				// Before the shortcuts of Only and Unchanged: time alone brings a
				// certificate to its re-issue, and checking it costs no request.
				ca := live[ObjectRef{Version: "v1", Kind: "Secret", Namespace: obj.GetNamespace(), Name: CertificateIssuer(obj)}.key()]
				changes[i], reissues[i] = planCertificate(obj, liveObj, ca, pl.now())
			case liveObj != nil && ((pl.Only != nil && !pl.Only(obj)) || (pl.Unchanged != nil && pl.Unchanged(obj, liveObj))):
				changes[i] = Change{Object: ref, ResourceVersion: liveObj.GetResourceVersion(), Action: ActionUnchanged}
			case IsGenerated(obj):
				changes[i] = planGenerated(obj, liveObj)
			default:
				if pl.Live != nil {
					var err error
					if liveObj, err = pl.fromAPI(gctx, obj); err != nil {
						return fmt.Errorf("plane %s: %s: %w", obj.GetLabels()[PlaneLabel], ref, err)
					}
				}
				ch, err := pl.planObject(gctx, obj, liveObj, d.InventoryID, owners)
				if err != nil && pl.KeepGoing && liveObj != nil && gctx.Err() == nil && (apierrors.IsInvalid(err) || apierrors.IsForbidden(err)) {
					// Refused (invalid, or denied by RBAC or an admission policy): no
					// retry makes it pass, and the rest of the platform must not wait
					// for it.
					failed[i] = &ObjectFailure{Plane: obj.GetLabels()[PlaneLabel], Object: ref, Message: err.Error()}
					changes[i] = Change{Object: ref, ResourceVersion: liveObj.GetResourceVersion(), Action: ActionUnchanged}
					return nil
				}
				if err != nil {
					return fmt.Errorf("plane %s: %s: %w", obj.GetLabels()[PlaneLabel], ref, err)
				}
				changes[i] = ch
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, f := range failed {
		if f != nil {
			p.Failed = append(p.Failed, *f)
		}
	}
	p.Planes = append(p.Planes, platformPlane)
	i := 0
	for _, pln := range d.Planes {
		// Full slice expression: appending a delete to this plane must not overwrite
		// the next plane's changes in the shared array.
		n := i + len(pln.Objects)
		pp := PlanePlan{Name: string(pln.Name), Changes: changes[i:n:n]}
		i = n
		p.Planes = append(p.Planes, pp)
	}

	pl.addDeletes(p, d, live)
	takeBackReplicas(p, live)
	p.summarize()
	p.Warnings = append(namespaceWarnings(p), missingSecretWarnings(d.Namespace, p.MissingSecrets)...)
	p.Warnings = append(p.Warnings, ingressTLS...)
	p.Warnings = append(p.Warnings, quotaWarnings(objs, live)...)
	for _, w := range reissues {
		if w != "" {
			p.Warnings = append(p.Warnings, w)
		}
	}
	return p, nil
}

func (pl *Planner) now() time.Time {
	if pl.Now == nil {
		return time.Now()
	}
	return pl.Now()
}

// InventoryMetadata are the parent's labels and annotations that make it the ApplySet
// parent of its members: all a run that keeps the platform objects (the watch) writes
// of it.
func InventoryMetadata() (labels, annotations []string) {
	return []string{inventory.IDLabel}, []string{inventory.ToolingAnnotation, inventory.ContainsGroupKindsAnnot}
}

// inventoryChange plans the parent when its spec is not this run's to write: an
// update of its inventory labels and annotations when they differ from desired's (a
// kind added to the platform must be listed, or uninstall and prune would not find
// its objects), else unchanged.
func inventoryChange(desired, live *unstructured.Unstructured) Change {
	ch := Change{Object: RefOf(desired), ResourceVersion: live.GetResourceVersion(), Action: ActionUnchanged}
	labels, annotations := InventoryMetadata()
	for _, k := range labels {
		if desired.GetLabels()[k] != live.GetLabels()[k] {
			ch.Fields = append(ch.Fields, FieldChange{Path: "metadata.labels." + k, Old: live.GetLabels()[k], New: desired.GetLabels()[k]})
		}
	}
	for _, k := range annotations {
		if desired.GetAnnotations()[k] != live.GetAnnotations()[k] {
			ch.Fields = append(ch.Fields, FieldChange{Path: "metadata.annotations." + k, Old: live.GetAnnotations()[k], New: desired.GetAnnotations()[k]})
		}
	}
	if len(ch.Fields) > 0 {
		ch.Action, ch.Desired = ActionUpdate, desired
	}
	return ch
}

// checkServed fails, before anything is written, when the cluster does not serve a kind
// the platform renders, such as ServiceMonitor without the Prometheus Operator's CRDs,
// or cert-manager's Certificate when spec.global.tls.issuerRef asks for it.
func (pl *Planner) checkServed(d *Desired) error {
	var missing, hints []string
	seen := map[schema.GroupVersionKind]bool{}
	for _, pln := range d.Planes {
		for _, obj := range pln.Objects {
			gvk := obj.GroupVersionKind()
			if seen[gvk] {
				continue
			}
			seen[gvk] = true
			if _, err := pl.Clients.Mapping(obj); meta.IsNoMatchError(err) {
				missing = append(missing, fmt.Sprintf("%s %s (plane %s, e.g. %s)", gvk.GroupVersion(), gvk.Kind, pln.Name, obj.GetName()))
				hints = append(hints, servedHint(gvk))
			} else if err != nil {
				return fmt.Errorf("discover %s: %w", gvk, err)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the cluster does not serve kinds this platform renders: %s; %s", strings.Join(missing, ", "), strings.Join(hints, "; "))
	}
	return nil
}

// servedHint says where a kind the platform may render comes from, and which spec
// field turns it off.
func servedHint(gvk schema.GroupVersionKind) string {
	switch {
	case gvk.Group == "cert-manager.io":
		return "cert-manager is not installed, so the services' certificates cannot be issued (" + gvk.Kind + "): install cert-manager, or remove spec.global.tls.issuerRef for certificates issued by apply"
	case gvk.Kind == "ServiceMonitor":
		return "install the Prometheus Operator's CRDs, or turn the ServiceMonitor off (spec.observability.metrics.serviceMonitor: false)"
	}
	return "install the CRD of " + gvk.Kind
}

func (pl *Planner) concurrency() int {
	if pl.Concurrency > 0 {
		return pl.Concurrency
	}
	return DefaultConcurrency
}

func (pl *Planner) fieldManager() string {
	if pl.FieldManager != "" {
		return pl.FieldManager
	}
	return FieldManager
}

func createChange(obj *unstructured.Unstructured) Change {
	return Change{Action: ActionCreate, Object: RefOf(obj), Desired: obj}
}

// getLive reads the live obj, nil when it does not exist (cluster-scoped objects
// outside the inventory, such as the CRD).
func (pl *Planner) getLive(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if pl.Shared == nil || pl.Live != nil {
		return pl.getFrom(ctx, pl.live(), obj)
	}
	m, err := pl.Clients.Mapping(obj)
	if err != nil {
		return nil, err
	}
	read := func() (*unstructured.Unstructured, error) { return pl.getFrom(ctx, pl.live(), obj) }
	if o, ok, err := pl.Shared.get(ctx, m, obj, read); err != nil || ok {
		return o, err
	}
	return read()
}

// planObject dry-runs the apply of obj against live, the live object the caller read;
// nil live is a create, validated by a dry-run too. owners names the platforms of the
// namespace by inventory id, for conflicts with another platform's objects.
func (pl *Planner) planObject(ctx context.Context, obj, live *unstructured.Unstructured, inventoryID string, owners map[string]string) (Change, error) {
	ri, err := pl.Clients.Resource(obj)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return Change{}, fmt.Errorf("the cluster does not serve %s: %w", obj.GroupVersionKind(), err)
		}
		return Change{}, err
	}
	if live == nil {
		data, err := obj.MarshalJSON()
		if err != nil {
			return Change{}, err
		}
		// A dry-run create still runs the API server's validation and admission (schema,
		// CEL, PodSecurity, quota), so a plan that would be rejected fails here, before
		// apply writes anything.
		opts := metav1.PatchOptions{FieldManager: pl.fieldManager(), DryRun: []string{metav1.DryRunAll}}
		if _, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts); err != nil {
			return Change{}, fmt.Errorf("the API server rejects it: %w", err)
		}
		return createChange(obj), nil
	}
	obj = pl.replicasToApply(obj, live)
	var conflicts []Conflict
	// Every platform applies with the same field manager, so SSA cannot see one platform
	// taking another's object: the inventory label can.
	if other := live.GetLabels()[inventory.PartOfLabel]; other != "" && inventoryID != "" && other != inventoryID {
		owner := owners[other]
		if owner == "" {
			owner = "a platform that no longer exists (inventory " + other + ")"
		} else {
			owner = "platform " + owner
		}
		conflicts = append(conflicts, Conflict{
			Kind:    ConflictInventory,
			Field:   "metadata.labels[" + inventory.PartOfLabel + "]",
			Manager: owner,
			Message: "the object belongs to another platform's inventory",
		})
	}
	// An object of the same name that nobody's inventory holds was made by hand or by
	// another tool: taking it silently would make it prunable later. The namespace is
	// the exception: creating it beforehand is the usual way to set it up.
	if live.GetLabels()[inventory.PartOfLabel] == "" && inventoryID != "" && !pl.Adopt && !isNamespace(obj) {
		conflicts = append(conflicts, Conflict{
			Kind:    ConflictUnowned,
			Field:   "metadata.labels[" + inventory.PartOfLabel + "]",
			Manager: "no platform",
			Message: "the object exists and belongs to no platform (made by hand or by another tool); --adopt makes it this platform's",
		})
	}
	// What the managed fields prove unchanged needs no dry-run: a plan of an unchanged
	// platform then costs its lists alone.
	if len(conflicts) == 0 && ProvenUnchanged(obj, live, pl.fieldManager()) {
		return Change{Object: RefOf(obj), ResourceVersion: live.GetResourceVersion(), Action: ActionUnchanged}, nil
	}
	// Encoded only now: most objects of an unchanged fleet are proven above.
	data, err := obj.MarshalJSON()
	if err != nil {
		return Change{}, err
	}
	opts := metav1.PatchOptions{FieldManager: pl.fieldManager(), DryRun: []string{metav1.DryRunAll}}
	merged, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	if apierrors.IsConflict(err) {
		// Show the conflict instead of failing: what the apply would take over, from
		// whom. The forced dry-run then gives the rest of the diff.
		conflicts = append(conflicts, conflictsOf(err)...)
		force := true
		opts.Force = &force
		merged, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	}
	if isImmutableStatefulSetUpdate(obj, err) {
		return pl.planStatefulSetReplace(ctx, ri, obj, live, conflicts, err)
	}
	if apierrors.IsInvalid(err) {
		if foreign := foreignServicePorts(obj, live); len(foreign) > 0 {
			return pl.planPortsReplace(ctx, ri, obj, live, conflicts, foreign, err)
		}
	}
	if err != nil {
		return Change{}, err
	}
	ch := Change{Object: RefOf(obj), ResourceVersion: live.GetResourceVersion(), Conflicts: conflicts}
	ch.Fields = Diff(live, merged)
	if len(ch.Fields) == 0 && len(conflicts) == 0 {
		ch.Action = ActionUnchanged
		return ch, nil
	}
	ch.Action = ActionUpdate
	ch.Desired = obj
	return ch, nil
}

// replicasToApply is obj as it is applied over live, an existing workload, as far as
// spec.replicas goes: without a count rendered for creation only, and with the live
// count when this field manager must hand it over to an autoscaler (keepReplicas). It
// returns obj itself when nothing changes.
func (pl *Planner) replicasToApply(obj, live *unstructured.Unstructured) *unstructured.Unstructured {
	return pl.keepReplicas(withoutCreateOnlyReplicas(obj), live)
}

// withoutCreateOnlyReplicas is obj, a workload that exists, without the spec.replicas
// it renders for its creation only (v1alpha1.CreateOnlyReplicas): its autoscaler owns
// the count now. keepReplicas then decides, as for a workload that renders none,
// whether the live count is applied once more to hand the field over.
func withoutCreateOnlyReplicas(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if !v1alpha1.CreateOnlyReplicas(obj.GetAnnotations()) {
		return obj
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas"); !found {
		return obj
	}
	out := obj.DeepCopy()
	unstructured.RemoveNestedField(out.Object, "spec", "replicas")
	return out
}

// keepReplicas hands spec.replicas over to an autoscaler without a scale-down: when obj
// leaves the field out (autoscaling was just turned on) but this field manager owns the
// live value, applying without it would remove the field and default the workload to 1
// replica. So the live value is applied once more; the autoscaler's first scale then
// takes the field over, and later applies leave it alone.
func (pl *Planner) keepReplicas(obj, live *unstructured.Unstructured) *unstructured.Unstructured {
	if gvk := obj.GroupVersionKind(); gvk.Group != "apps" || (gvk.Kind != "Deployment" && gvk.Kind != "StatefulSet") {
		return obj
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas"); found {
		return obj
	}
	replicas, found, _ := unstructured.NestedInt64(live.Object, "spec", "replicas")
	if !found || !ownsField(live, pl.fieldManager(), "f:spec", "f:replicas") {
		return obj
	}
	out := obj.DeepCopy()
	_ = unstructured.SetNestedField(out.Object, replicas, "spec", "replicas")
	return out
}

// ownsField reports whether manager's apply owns the field at path (in managedFields'
// "f:" notation) of live.
func ownsField(live *unstructured.Unstructured, manager string, path ...string) bool {
	for _, mf := range live.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		cur := fields
		for i, p := range path {
			next, ok := cur[p].(map[string]any)
			if !ok {
				break
			}
			if i == len(path)-1 {
				return true
			}
			cur = next
		}
	}
	return false
}

var conflictManager = regexp.MustCompile(`conflict with "([^"]+)"`)

// conflictsOf reads the field-manager conflicts out of an apply's 409 error.
func conflictsOf(err error) []Conflict {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return []Conflict{{Kind: ConflictFieldManager, Message: err.Error()}}
	}
	var out []Conflict
	for _, cause := range status.Status().Details.Causes {
		if cause.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		c := Conflict{Kind: ConflictFieldManager, Field: cause.Field, Message: cause.Message}
		if m := conflictManager.FindStringSubmatch(cause.Message); m != nil {
			c.Manager = m[1]
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		out = append(out, Conflict{Kind: ConflictFieldManager, Message: err.Error()})
	}
	return out
}

// liveObjects lists, once per kind, the live objects of the platform's namespace (and
// its cluster-scoped members), keyed by ObjectRef.key; ns is the live namespace, nil
// when it does not exist.
func (pl *Planner) liveObjects(ctx context.Context, d *Desired, ns *unstructured.Unstructured) (map[string]*unstructured.Unstructured, error) {
	c := pl.Clients
	live := map[string]*unstructured.Unstructured{}
	nsExists := ns != nil

	// Kinds rendered now, kinds recorded on the parent from earlier applies (they may
	// hold objects to prune) and the parent itself.
	var previous []schema.GroupKind
	gks := inventory.Union(inventory.GroupKinds(d.Objects()), []schema.GroupKind{v1alpha1.GroupVersionKind.GroupKind()})
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pl.concurrency())
	listKind := func(ctx context.Context, gk schema.GroupKind) error {
		mapping, err := c.Mapper.RESTMapping(gk)
		if meta.IsNoMatchError(err) {
			c.Mapper.Reset()
			mapping, err = c.Mapper.RESTMapping(gk)
		}
		if meta.IsNoMatchError(err) {
			return nil // not served: nothing live; planObject names it if rendered
		}
		if err != nil {
			return fmt.Errorf("map %s: %w", gk, err)
		}
		ns, selector := d.Namespace, ""
		if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			// Cluster-wide lists would read every tenant's objects: members only.
			ns, selector = "", inventory.PartOfLabel+"="+d.InventoryID
		} else if !nsExists {
			return nil
		}
		var items []*unstructured.Unstructured
		shared := false
		if selector == "" && pl.Shared != nil && pl.Live == nil {
			var err error
			if items, shared, err = pl.Shared.list(ctx, mapping, ns); err != nil {
				return fmt.Errorf("list %s of the run's platforms: %w", gk, err)
			}
			shared = shared && covers(d, gk, ns, items)
		}
		if !shared {
			var err error
			if items, err = pl.live().List(ctx, mapping, ns, selector); err != nil {
				return fmt.Errorf("list %s in %s: %w", gk, d.Namespace, err)
			}
		}
		if selector == "" {
			pl.Lists.keep(mapping.Resource, ns, items)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, o := range items {
			live[RefOf(o).key()] = o
		}
		return nil
	}
	for _, gk := range gks {
		if gk == (schema.GroupKind{Kind: "Namespace"}) {
			// The one namespace an inventory can hold is the platform's own (another
			// namespace is another platform's inventory), read already: ns.
			continue
		}
		g.Go(func() error { return listKind(gctx, gk) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Kinds only the parent remembers, found once the parent is read.
	if parent := live[RefOf(d.Platform).key()]; parent != nil {
		previous = inventory.ParseGroupKinds(parent.GetAnnotations()[inventory.ContainsGroupKindsAnnot])
	}
	known := map[schema.GroupKind]bool{}
	for _, gk := range gks {
		known[gk] = true
	}
	for _, gk := range previous {
		if !known[gk] {
			// ctx, not gctx: the group's context ends when Wait returns.
			if err := listKind(ctx, gk); err != nil {
				return nil, err
			}
		}
	}
	if nsExists {
		live[RefOf(ns).key()] = ns
	}
	return live, nil
}

// addDeletes adds a delete for every live inventory member the platform no longer
// renders. PersistentVolumeClaims and generated Secrets are never pruned: they hold
// data. A delete records the object's UID, so prune never deletes a newer object that
// took the name.
func (pl *Planner) addDeletes(p *Plan, d *Desired, live map[string]*unstructured.Unstructured) {
	desired := map[string]bool{RefOf(d.Platform).key(): true}
	for _, o := range d.Objects() {
		desired[RefOf(o).key()] = true
	}
	var deletes []*unstructured.Unstructured
	for key, o := range live {
		if desired[key] || o.GetLabels()[inventory.PartOfLabel] != d.InventoryID {
			continue
		}
		if gvk := o.GroupVersionKind(); gvk.Group == "" && gvk.Kind == "PersistentVolumeClaim" {
			continue
		}
		// A generated Secret outlives its component like the component's volumes do:
		// its values initialised that data, and a re-enabled component must find them.
		if IsGenerated(o) || IsCertificateAuthority(o) {
			continue
		}
		deletes = append(deletes, o)
	}
	sort.Slice(deletes, func(i, j int) bool { return RefOf(deletes[i]).key() < RefOf(deletes[j]).key() })
	for _, o := range deletes {
		plane := o.GetLabels()[PlaneLabel]
		pp := p.Plane(plane)
		if pp == nil {
			p.Planes = append(p.Planes, PlanePlan{Name: plane})
			pp = &p.Planes[len(p.Planes)-1]
		}
		pp.Changes = append(pp.Changes, Change{Action: ActionDelete, Object: RefOf(o), ResourceVersion: o.GetResourceVersion(), UID: string(o.GetUID())})
	}
}

// takeBackReplicas settles the conflict of turning autoscaling off: the autoscaler
// owns spec.replicas of its workload, so applying replicas again conflicts with it.
// When the plan also deletes that autoscaler, the field is taken over (that object
// alone is applied with force), since nobody else will want it.
func takeBackReplicas(p *Plan, live map[string]*unstructured.Unstructured) {
	released := map[string]bool{}
	for _, pp := range p.Planes {
		for _, c := range pp.Changes {
			if c.Action != ActionDelete || c.Object.Group != "autoscaling" || c.Object.Kind != "HorizontalPodAutoscaler" {
				continue
			}
			hpa := live[c.Object.key()]
			if hpa == nil {
				continue
			}
			kind, _, _ := unstructured.NestedString(hpa.Object, "spec", "scaleTargetRef", "kind")
			name, _, _ := unstructured.NestedString(hpa.Object, "spec", "scaleTargetRef", "name")
			released[kind+"/"+name] = true
		}
	}
	if len(released) == 0 {
		return
	}
	for i := range p.Planes {
		for j := range p.Planes[i].Changes {
			c := &p.Planes[i].Changes[j]
			if c.Object.Group != "apps" || !released[c.Object.Kind+"/"+c.Object.Name] {
				continue
			}
			kept := c.Conflicts[:0]
			for _, cf := range c.Conflicts {
				if cf.Kind == ConflictFieldManager && strings.TrimPrefix(cf.Field, ".") == "spec.replicas" {
					c.TakeOver = append(c.TakeOver, cf)
					continue
				}
				kept = append(kept, cf)
			}
			c.Conflicts = kept
			if len(c.Conflicts) == 0 {
				c.Conflicts = nil
			}
		}
	}
}

// PlanCRD plans the OntoPlatform CRD (CRD()) alone, as Plan plans it: a create when it does not exist, else
// its dry-run. Commands applying many platforms write the CRD once, before them, so
// that their runs find it unchanged instead of each writing it.
func (pl *Planner) PlanCRD(ctx context.Context, crd *unstructured.Unstructured) (Change, error) {
	live, err := pl.getLive(ctx, crd)
	if err != nil {
		return Change{}, fmt.Errorf("plan CRD %s: %w", crd.GetName(), err)
	}
	if live == nil {
		return createChange(crd), nil
	}
	ch, err := pl.planObject(ctx, crd, live, "", nil)
	if err != nil {
		return Change{}, fmt.Errorf("plan CRD %s: %w", crd.GetName(), err)
	}
	return ch, nil
}
