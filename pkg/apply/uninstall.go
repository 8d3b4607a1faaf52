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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/health"
	"github.com/coomia-dip/kubectl-onto/pkg/inventory"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// Uninstall event types; the other types of Event are apply's.
const (
	// EventObjectDeleted: a delete was accepted (or, in a dry run, would be).
	EventObjectDeleted EventType = "ObjectDeleted"
	// EventObjectKept: an object uninstall leaves in place, with the reason.
	EventObjectKept EventType = "ObjectKept"
	// EventPlaneDeleted: every object of a step is gone.
	EventPlaneDeleted EventType = "PlaneDeleted"
)

// UninstallResult is what an uninstall did.
type UninstallResult struct {
	Plan *UninstallPlan
	// Deleted counts the objects deleted (or that a dry run would delete).
	Deleted int
}

// Uninstall deletes the platform name in namespace (the only one when name is empty):
// holding the same lock as Apply, it deletes the plan's stages in order (the service
// planes together, then infrastructure, then tenancy) and waits, by watch, until each
// stage's objects and the pods of its workloads are gone before starting the next;
// the OntoPlatform object goes last but for the namespace. The OntoPlatform CRD
// stays: other platforms may use it.
//
// A dry run returns the plan after at most a server-side dry-run of each delete.
func (a *Applier) Uninstall(ctx context.Context, namespace, name string, opts UninstallOptions) (*UninstallResult, error) {
	// unlocked is ctx without the lock: deleting the namespace deletes the lock's
	// Lease with it, so that step runs after releasing the lock, lest the keep-alive
	// see its lease vanish and cancel the run as a lost lock.
	unlocked := ctx
	releaseLock := func() {}
	writing := opts.DryRun != DryRunClient && opts.DryRun != DryRunServer
	if writing {
		// The plan is made under the lock: a run that held it (--lock-wait) may have
		// created objects a plan made before could not see. Only the name is needed
		// to take it.
		parent, err := (&inventory.Lister{Dynamic: a.Clients.Dynamic, Mapper: a.Clients.Mapper}).Parent(ctx, namespace, name)
		var notFound *inventory.NotFoundError
		if errors.As(err, &notFound) && !notFound.CRDMissing {
			if res, done, ferr := a.finishDeleted(ctx, namespace, name, opts); ferr != nil || done {
				return res, ferr
			}
		}
		if err != nil {
			return nil, err
		}
		var release func()
		ctx, release, err = a.lock(ctx, parent.GetNamespace(), parent.GetName(), opts.Holder, opts.LockTTL, opts.LockWait)
		if err != nil {
			return nil, err
		}
		var once sync.Once
		releaseLock = func() { once.Do(release) }
		defer releaseLock()
		namespace, name = parent.GetNamespace(), parent.GetName()
	}
	p, err := a.PlanUninstall(ctx, namespace, name, opts)
	if err != nil {
		return nil, err
	}
	res := &UninstallResult{Plan: p}
	if opts.DryRun == DryRunClient {
		res.Deleted = p.Count()
		return res, nil
	}
	for _, k := range p.Kept {
		a.emit(Event{Type: EventObjectKept, Object: k.Object.String(), Message: k.Reason})
	}
	// The first stage this run completes has seen every orphaned pod go; the
	// stages after it do not look for them again.
	orphansGone := false
	// The kept namespace leaves the inventory before the OntoPlatform's stage; a
	// plan without that stage (Finalizing: the API server deletes the OntoPlatform)
	// releases it at the end.
	namespaceReleased := false
	for _, stage := range p.Stages() {
		// The OntoPlatform and the namespace are stages of their own.
		if stage[0].Plane == plan.PlatformPlane && writing {
			// The kept namespace leaves the inventory before its parent goes: a run
			// killed between the two left it labelled for a parent no re-run can
			// find, and every other platform there was refused as a conflict.
			if err := a.releaseKeptNamespace(ctx, p); err != nil {
				return res, err
			}
			namespaceReleased = true
			// Without a reconciler to remove it, the watch's finalizer would keep
			// the OntoPlatform Terminating for ever: this run did its work.
			if err := a.RemoveFinalizer(ctx, p.Platform.Namespace, p.Platform.Name); err != nil {
				return res, err
			}
		}
		stageCtx := ctx
		if stage[0].Plane == namespaceStep && writing {
			// The OntoPlatform is gone: nothing is left for another run to race.
			releaseLock()
			stageCtx = unlocked
		}
		if err := a.deleteStage(stageCtx, p, stage, opts, res, orphansGone); err != nil {
			return res, err
		}
		orphansGone = true
	}
	if opts.DryRun != DryRunServer {
		if !namespaceReleased {
			if err := a.releaseKeptNamespace(ctx, p); err != nil {
				return res, err
			}
		}
		a.emit(Event{Type: EventDone, Message: fmt.Sprintf("%d objects deleted, %d kept", res.Deleted, len(p.Kept))})
	}
	return res, nil
}

// finishDeleted completes a run killed after the OntoPlatform name was gone and
// before it released its lock (an uninstall between its last two steps): the re-run
// finds no OntoPlatform, only the lock's Lease. It takes the lock as any run does (a live holder's is still an error, or
// waited for) and releases it, which deletes the Lease. Without a name, the one lock
// Lease of the namespace names the platform. done is false when there is no Lease to
// remove (nothing was left: the caller reports the platform as not found).
func (a *Applier) finishDeleted(ctx context.Context, namespace, name string, opts UninstallOptions) (res *UninstallResult, done bool, err error) {
	if opts.DeleteData {
		if res, done, err := a.finishNamespace(ctx, namespace, name, opts); err != nil || done {
			return res, done, err
		}
	}
	if name == "" {
		leases, err := a.Clients.Kube.CoordinationV1().Leases(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, false, fmt.Errorf("list the lock leases in %s: %w", namespace, err)
		}
		var names []string
		for _, l := range leases.Items {
			if n, ok := strings.CutPrefix(l.Name, LockName("")); ok {
				names = append(names, n)
			}
		}
		if len(names) != 1 {
			return nil, false, nil
		}
		name = names[0]
	}
	holder, _, err := LeaseOf(ctx, a.Clients.Kube, namespace, name)
	if err != nil || holder == "" {
		return nil, false, err
	}
	_, release, err := a.lock(ctx, namespace, name, opts.Holder, opts.LockTTL, opts.LockWait)
	if err != nil {
		return nil, false, err
	}
	release()
	a.emit(Event{Type: EventDone, Message: fmt.Sprintf("OntoPlatform %s/%s is already gone; removed the lock an interrupted run left", namespace, name)})
	p := &UninstallPlan{Platform: platformRef(namespace, name)}
	return &UninstallResult{Plan: p}, true, nil
}

// finishNamespace completes an uninstall --delete-data killed after it deleted the
// namespace, while the namespace controller emptied it: the re-run finds no
// OntoPlatform (nor a lock: it was released before the namespace's delete) and the
// namespace Terminating, still marked as created by the platform and labelled as its
// inventory's. It waits for the namespace to go, as the killed run did. Without a
// name, the namespace's created-by mark names the platform. done is false when the
// namespace is not such a one.
func (a *Applier) finishNamespace(ctx context.Context, namespace, name string, opts UninstallOptions) (res *UninstallResult, done bool, err error) {
	nsObj, err := a.Clients.Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Get(ctx, namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get namespace %s: %w", namespace, err)
	}
	createdBy := nsObj.GetAnnotations()[CreatedByAnnotation]
	if name == "" {
		name = createdBy
	}
	id := inventory.ID(namespace, name)
	if nsObj.GetDeletionTimestamp() == nil || name == "" || createdBy != name || nsObj.GetLabels()[inventory.PartOfLabel] != id {
		return nil, false, nil
	}
	p := &UninstallPlan{Platform: platformRef(namespace, name), InventoryID: id, DeleteData: true,
		live: map[plan.ObjectRef]*unstructured.Unstructured{plan.RefOf(nsObj): nsObj}}
	p.addStep(namespaceStep, []*unstructured.Unstructured{nsObj}, false)
	res = &UninstallResult{Plan: p}
	if err := a.deleteStage(ctx, p, p.Stages()[0], opts, res, false); err != nil {
		return res, true, err
	}
	a.emit(Event{Type: EventDone, Message: fmt.Sprintf("OntoPlatform %s/%s was already deleted by an interrupted uninstall; the namespace it deleted is gone now", namespace, name)})
	return res, true, nil
}

// platformRef is the reference of the OntoPlatform name in namespace.
func platformRef(namespace, name string) plan.ObjectRef {
	return plan.ObjectRef{Group: v1alpha1.GroupVersion.Group, Version: v1alpha1.GroupVersion.Version, Kind: v1alpha1.Kind, Namespace: namespace, Name: name}
}

// RemoveFinalizer takes the watch reconciler's Finalizer off the OntoPlatform
// namespace/name, if it is there (a JSON patch tested against the list it read, so a
// concurrent change of the finalizers fails instead of being overwritten).
func (a *Applier) RemoveFinalizer(ctx context.Context, namespace, name string) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(v1alpha1.GroupVersionKind)
	obj.SetNamespace(namespace)
	ri, err := a.Clients.Resource(obj)
	if err != nil {
		return err
	}
	live, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	i := slices.Index(live.GetFinalizers(), Finalizer)
	if i < 0 {
		return nil
	}
	patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/finalizers/%d","value":%q},{"op":"remove","path":"/metadata/finalizers/%d"}]`, i, Finalizer, i)
	if _, err := ri.Patch(ctx, name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: a.fieldManager()}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer %s from OntoPlatform %s/%s: %w", Finalizer, namespace, name, err)
	}
	return nil
}

// releaseKeptNamespace takes the kept namespace out of the deleted platform's
// inventory. Left labelled, it would make every later platform there a conflict with
// an inventory whose parent is gone.
func (a *Applier) releaseKeptNamespace(ctx context.Context, p *UninstallPlan) error {
	for _, k := range p.Kept {
		if k.Object.Group != "" || k.Object.Kind != "Namespace" {
			continue
		}
		ns := p.live[k.Object]
		if ns == nil || ns.GetLabels()[inventory.PartOfLabel] != p.InventoryID {
			continue
		}
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null,%q:null}}}`, inventory.PartOfLabel, plan.PlaneLabel)
		if _, err := a.Clients.Kube.CoreV1().Namespaces().Patch(ctx, k.Object.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: a.fieldManager()}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("take kept namespace %s out of the platform's inventory: %w", k.Object.Name, err)
		}
	}
	return nil
}

// deleteStage deletes the steps of one stage at once and returns when all their
// objects are gone, or at the first failure, which cancels the others; each step
// reports its own plane's start, deletion and failure.
//
// An uninstall interrupted before may have deleted workloads whose pods are still
// there (orphanedPods). The first stage of a run first waits for those of the planes
// deleted before its own; its steps then wait for the rest beside their own pods:
// those of their own planes, and of the planes after, whose owners are gone too, so
// that waiting for them sooner changes no order. Once that stage is done
// (orphansGone), no later stage looks for them again: each such look is a pod list.
// The namespace's ReplicaSets, listed before the stage's deletes, tell
// both those and the pods of the Deployments the steps delete (podOwners).
func (a *Applier) deleteStage(ctx context.Context, p *UninstallPlan, stage []UninstallStep, opts UninstallOptions, res *UninstallResult, orphansGone bool) error {
	var later func(metav1.Object) bool
	var replicaSets []appsv1.ReplicaSet
	if opts.DryRun != DryRunServer && (!orphansGone || stageHas(stage, "apps", health.KindDeployment)) {
		ns := p.Platform.Namespace
		list, err := a.Clients.Kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return &ApplyError{Plane: stage[0].Plane, Err: fmt.Errorf("list the ReplicaSets in %s: %w", ns, err)}
		}
		replicaSets = list.Items
	}
	watch := newStageWatch(ctx, a.Clients)
	defer watch.stop()
	if opts.DryRun != DryRunServer && !orphansGone {
		orphaned := orphanedPods(p, replicaSets)
		rank := uninstallRank(stage[0].Plane)
		earlier := func(pod metav1.Object) bool { r, ok := orphaned(pod); return ok && r < rank }
		later = func(pod metav1.Object) bool { r, ok := orphaned(pod); return ok && r >= rank }
		if rank > 1 {
			wctx, cancel := context.WithTimeout(ctx, planeTimeout(opts))
			err := watch.waitGone(wctx, nil, map[string]map[types.UID]bool{p.Platform.Namespace: {}}, earlier)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return &ApplyError{Plane: stage[0].Plane, Err: fmt.Errorf("the pods of the planes deleted before are not gone after %s: %w", planeTimeout(opts), err)}
			}
		}
	}
	deleted := make([]int, len(stage))
	g, gctx := errgroup.WithContext(ctx)
	for i, step := range stage {
		g.Go(func() error {
			n, err := a.deleteStep(gctx, p, step, opts, watch, replicaSets, later)
			deleted[i] = n
			// A step cancelled because another of the stage failed did not fail itself.
			cancelledBySibling := ctx.Err() == nil && gctx.Err() != nil && errors.Is(err, context.Canceled)
			if err != nil && !cancelledBySibling {
				a.emit(Event{Type: EventPlaneFailed, Plane: step.Plane, Message: err.Error()})
			}
			return err
		})
	}
	err := g.Wait()
	for _, n := range deleted {
		res.Deleted += n
	}
	return err
}

// deleteStep deletes one step's objects, then waits until they and their workloads'
// pods are gone, and the pods orphaned accepts (nil: none); replicaSets are the
// platform namespace's, listed before the deletes. It returns how many deletes were
// accepted.
//
// Only the objects whose delete was not answered "gone" are watched (those a finalizer
// holds: the namespace, protected claims): with every object watched, each stage
// listed and watched every kind it deleted, 8 lists for the service stage of the
// production example, queued at the API server behind the stage's deletes.
func (a *Applier) deleteStep(ctx context.Context, p *UninstallPlan, step UninstallStep, opts UninstallOptions, watch *stageWatch, replicaSets []appsv1.ReplicaSet, orphaned func(metav1.Object) bool) (int, error) {
	a.emit(Event{Type: EventPlaneStarted, Plane: step.Plane, Message: fmt.Sprintf("%d to delete", len(step.Objects))})
	var objs []*unstructured.Unstructured
	for _, ref := range step.Objects {
		objs = append(objs, p.live[ref])
	}
	// The pods to wait for are known by their owners, found before the deletes: once a
	// Deployment is gone, its ReplicaSets may be too while their pods remain.
	var owners map[string]map[types.UID]bool
	if opts.DryRun != DryRunServer {
		owners = podOwners(objs, replicaSets)
		if ns := p.Platform.Namespace; orphaned != nil && owners[ns] == nil {
			owners[ns] = map[types.UID]bool{}
		}
	}
	var accepted atomic.Int64
	// terminating are the objects whose delete left them in place, for the wait to
	// watch; the API server answered that the others are gone.
	var mu sync.Mutex
	var terminating []*unstructured.Unstructured
	deleteAll := func(objs []*unstructured.Unstructured) error {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(plan.DefaultConcurrency)
		for _, obj := range objs {
			g.Go(func() error {
				gone, err := a.deleteOne(gctx, obj, opts.DryRun == DryRunServer)
				if err != nil {
					return &ApplyError{Plane: step.Plane, Object: plan.RefOf(obj).String(), Err: err}
				}
				if !gone {
					mu.Lock()
					terminating = append(terminating, obj)
					mu.Unlock()
				}
				accepted.Add(1)
				ref := plan.RefOf(obj)
				a.emit(Event{Type: EventObjectDeleted, Plane: step.Plane, Object: ref.String(), Action: plan.ActionDelete, Ref: &ref})
				return nil
			})
		}
		return g.Wait()
	}
	// The workloads go first, and their pods as soon as they have (watch.own): the pods'
	// termination then overlaps the deletes of the rest, which no pod needs to stop.
	// Sent in the order rendered, the infrastructure step's StatefulSets were the last
	// of its deletes (docs/benchmarks.md).
	workloads, rest := splitWorkloads(objs)
	if err := deleteAll(workloads); err != nil {
		return int(accepted.Load()), err
	}
	if opts.DryRun != DryRunServer {
		watch.own(owners)
	}
	if err := deleteAll(rest); err != nil {
		return int(accepted.Load()), err
	}
	if opts.DryRun == DryRunServer {
		return len(objs), nil
	}
	timeout := planeTimeout(opts)
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := watch.waitGone(wctx, terminating, owners, orphaned); err != nil {
		if ctx.Err() != nil {
			return len(objs), ctx.Err()
		}
		return len(objs), &ApplyError{Plane: step.Plane, Err: fmt.Errorf("not gone after %s: %w", timeout, err)}
	}
	a.emit(Event{Type: EventPlaneDeleted, Plane: step.Plane})
	return len(objs), nil
}

// deleteOne deletes obj, on condition that it is still the object the plan saw (same
// UID): a namesake created since is not the platform's to delete. The propagation is
// background, as kubectl's: the object goes at once and the garbage collector deletes
// its dependents after it; deleteStep waits for the pods among them (stageWatch.waitGone),
// not for the ReplicaSets in between, nor for dependents of other kinds (the platform
// renders none that outlive their pods).
// Foreground deletion waits for the same pods but costs the garbage collector a
// finalizer update on each owner and each ReplicaSet: several times slower for the
// service planes of the production example (docs/benchmarks.md).
//
// It reports whether the API server answered that obj is gone (kube.Clients.Delete):
// then no wait needs to watch for it.
func (a *Applier) deleteOne(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) (gone bool, err error) {
	policy := metav1.DeletePropagationBackground
	o := metav1.DeleteOptions{PropagationPolicy: &policy}
	if uid := obj.GetUID(); uid != "" {
		o.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if dryRun {
		o.DryRun = []string{metav1.DryRunAll}
	}
	gone, err = a.Clients.Delete(ctx, obj, o)
	if apierrors.IsNotFound(err) || (apierrors.IsConflict(err) && o.Preconditions != nil) {
		return true, nil // already gone, or replaced by an object the plan never saw
	}
	return gone, err
}

// podOwners are the UIDs, by namespace, of whatever controls the pods of the workloads
// among objs: each StatefulSet, DaemonSet, ReplicaSet or Job, and those of
// replicaSets each Deployment controls (a platform's workloads are all in its
// namespace, whose ReplicaSets these are).
func podOwners(objs []*unstructured.Unstructured, replicaSets []appsv1.ReplicaSet) map[string]map[types.UID]bool {
	owners := map[string]map[types.UID]bool{}
	add := func(ns string, uid types.UID) {
		if owners[ns] == nil {
			owners[ns] = map[types.UID]bool{}
		}
		owners[ns][uid] = true
	}
	deployments := map[string]map[types.UID]bool{} // namespace → Deployment UIDs
	for _, o := range objs {
		switch gk := o.GroupVersionKind().GroupKind(); {
		case podControllers[gk]:
			add(o.GetNamespace(), o.GetUID())
		case gk == deploymentKind:
			if deployments[o.GetNamespace()] == nil {
				deployments[o.GetNamespace()] = map[types.UID]bool{}
			}
			deployments[o.GetNamespace()][o.GetUID()] = true
		}
	}
	for i := range replicaSets {
		rs := &replicaSets[i]
		if ref := metav1.GetControllerOfNoCopy(rs); ref != nil && deployments[rs.Namespace][ref.UID] {
			add(rs.Namespace, rs.UID)
		}
	}
	return owners
}

// planeTimeout is how long a step's objects and pods may take to go.
func planeTimeout(opts UninstallOptions) time.Duration {
	if opts.PlaneTimeout <= 0 {
		return 5 * time.Minute
	}
	return opts.PlaneTimeout
}

// uninstallRank orders planes as the uninstall deletes them: the service planes (1),
// infrastructure (2), tenancy (3), and after them the data, the OntoPlatform and the
// namespace (4).
func uninstallRank(plane string) int {
	switch {
	case plane == string(v1alpha1.PlaneInfrastructure):
		return 2
	case plane == string(v1alpha1.PlaneTenancy):
		return 3
	case servicePlane(plane):
		return 1
	}
	return 4
}

// orphanedPods recognises the pods of workloads an earlier, interrupted uninstall
// deleted in the background: the workload is gone, so podOwners cannot find them from
// it, but the garbage collector may not have deleted them (or their ReplicaSets) yet.
// Such a pod, in the platform's namespace, carries the platform's labels (instance,
// managed-by) and is controlled by a StatefulSet the plan does not hold live, or by a
// ReplicaSet that no Deployment the plan holds live controls; the predicate gives the
// uninstallRank of its plane (its component label). Pods of Jobs are never orphans
// (a migration Job goes with the OntoPlatform). replicaSets are the platform
// namespace's.
func orphanedPods(p *UninstallPlan, replicaSets []appsv1.ReplicaSet) func(metav1.Object) (int, bool) {
	platformLabels := labels.Set{v1alpha1.LabelInstance: p.Platform.Name, v1alpha1.LabelManagedBy: plan.FieldManager}
	live := map[types.UID]bool{} // the plan's live Deployments and StatefulSets
	for _, obj := range p.live {
		if k := obj.GetKind(); k == health.KindDeployment || k == health.KindStatefulSet {
			live[obj.GetUID()] = true
		}
	}
	kept := map[types.UID]bool{} // ReplicaSets of a live Deployment, or of no Deployment
	for i := range replicaSets {
		if ref := metav1.GetControllerOfNoCopy(&replicaSets[i]); ref == nil || ref.Kind != health.KindDeployment || live[ref.UID] {
			kept[replicaSets[i].UID] = true
		}
	}
	selector := platformLabels.AsSelector()
	return func(pod metav1.Object) (int, bool) {
		ref := metav1.GetControllerOfNoCopy(pod)
		switch {
		case ref == nil || !selector.Matches(labels.Set(pod.GetLabels())):
			return 0, false
		case ref.Kind == "ReplicaSet" && !kept[ref.UID], ref.Kind == health.KindStatefulSet && !live[ref.UID]:
			return uninstallRank(pod.GetLabels()[v1alpha1.LabelComponent]), true
		}
		return 0, false
	}
}

// podControllers are the kinds whose objects control pods themselves; a Deployment's
// pods are its ReplicaSets'.
var podControllers = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "StatefulSet"}: true, {Group: "apps", Kind: "DaemonSet"}: true,
	{Group: "apps", Kind: "ReplicaSet"}: true, {Group: "batch", Kind: "Job"}: true,
}

var deploymentKind = schema.GroupKind{Group: "apps", Kind: "Deployment"}

// splitWorkloads parts objs into the workloads whose pods podOwners finds and the
// rest, each in objs' order.
func splitWorkloads(objs []*unstructured.Unstructured) (workloads, rest []*unstructured.Unstructured) {
	for _, o := range objs {
		if gk := o.GroupVersionKind().GroupKind(); podControllers[gk] || gk == deploymentKind {
			workloads = append(workloads, o)
		} else {
			rest = append(rest, o)
		}
	}
	return workloads, rest
}

// stageHas reports whether one of stage's objects is of group and kind.
func stageHas(stage []UninstallStep, group, kind string) bool {
	for _, step := range stage {
		for _, ref := range step.Objects {
			if ref.Group == group && ref.Kind == kind {
				return true
			}
		}
	}
	return false
}

// controlledBy reports whether pod's controller is one of uids.
func controlledBy(pod metav1.Object, uids map[types.UID]bool) bool {
	for _, ref := range pod.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && uids[ref.UID] {
			return true
		}
	}
	return false
}
