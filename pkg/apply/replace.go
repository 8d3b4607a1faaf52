/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/plan"
)

// replace carries out a plan.ActionReplace: a StatefulSet whose volumes grew. Its
// claims are expanded first (the storage class allows it: the plan checked), then the
// StatefulSet is deleted with its pods left running (orphaned), and applied again; the
// new one adopts the pods and rolls them if its template changed. A run stopped in
// between is finished by the next one: the StatefulSet is then a create, and the
// claims already have their size.
func (a *Applier) replace(ctx context.Context, c plan.Change, opts Options) error {
	claims := a.Clients.Kube.CoreV1().PersistentVolumeClaims(c.Object.Namespace)
	for _, cl := range c.Claims {
		patch := fmt.Sprintf(`{"spec":{"resources":{"requests":{"storage":%q}}}}`, cl.To)
		if _, err := claims.Patch(ctx, cl.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: a.fieldManager()}); err != nil {
			return fmt.Errorf("expand PersistentVolumeClaim %s to %s: %w", cl.Name, cl.To, err)
		}
		a.emit(Event{Type: EventObjectApplied, Object: "PersistentVolumeClaim " + c.Object.Namespace + "/" + cl.Name, Action: plan.ActionUpdate,
			Message: fmt.Sprintf("expanded %s → %s", cl.From, cl.To)})
	}
	ri, err := a.Clients.Resource(c.Desired)
	if err != nil {
		return err
	}
	orphan := metav1.DeletePropagationOrphan
	del := metav1.DeleteOptions{PropagationPolicy: &orphan}
	if c.UID != "" {
		uid := types.UID(c.UID)
		del.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if err := ri.Delete(ctx, c.Object.Name, del); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the StatefulSet, keeping its pods, to recreate it with larger volumes: %w", err)
	}
	// Bounded: the orphaning delete waits for the garbage collector's finalizer.
	timeout := opts.PlaneTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := a.waitDeleted(wctx, c.Desired); err != nil {
		return err
	}
	create := c
	create.Action = plan.ActionCreate
	create.ResourceVersion = ""
	if err := a.applyOne(ctx, create, opts); err != nil {
		return err
	}
	return a.settleRecreated(ctx, c.Desired)
}

// settleRecreated waits until the StatefulSet controller has observed the recreated
// StatefulSet. The controller's status write for the deleted one can land on the new
// object (it retries a conflicting status write on the object of that name), leaving
// an observedGeneration above the new object's generation; the controller then never
// corrects it, as it only writes a status whose observedGeneration is higher. Resetting
// that stale field lets it write the true status. Polled, not watched: nothing changes
// while the status is stuck.
func (a *Applier) settleRecreated(ctx context.Context, obj *unstructured.Unstructured) error {
	gvr, err := a.Clients.GVR(obj)
	if err != nil {
		return err
	}
	ri := a.Clients.Dynamic.Resource(gvr).Namespace(obj.GetNamespace())
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, nil // passing errors: the next poll, or the plane's wait, tells
		}
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		switch {
		case observed == u.GetGeneration():
			return true, nil
		case observed > u.GetGeneration():
			patch := []byte(`{"status":{"observedGeneration":0}}`)
			if _, err := ri.Patch(ctx, u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: a.fieldManager() + "-recreate"}, "status"); err != nil {
				return false, fmt.Errorf("reset the stale status of the recreated %s: %w", kube.Ref(u), err)
			}
		}
		return false, nil
	})
	if err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// On this wait's own timeout the plane's wait reports what is wrong; a run that was
	// stopped stops here.
	return ctx.Err()
}

// waitDeleted waits, by watch, until obj is gone (an orphaning delete first removes
// the dependents' owner references, behind a finalizer).
func (a *Applier) waitDeleted(ctx context.Context, obj *unstructured.Unstructured) error {
	gvr, err := a.Clients.GVR(obj)
	if err != nil {
		return err
	}
	lw := kube.ListWatch(a.Clients.Dynamic.Resource(gvr).Namespace(obj.GetNamespace()), "metadata.name="+obj.GetName())
	_, err = kube.UntilWithSync(ctx, lw, &unstructured.Unstructured{}, func(store cache.Store) (bool, error) {
		_, exists, err := store.GetByKey(obj.GetNamespace() + "/" + obj.GetName())
		return !exists, err
	}, func(ev watch.Event) (bool, error) {
		return ev.Type == watch.Deleted, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %s to be deleted: %w", kube.Ref(obj), err)
	}
	return nil
}
