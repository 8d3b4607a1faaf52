// Command provisioner is the test cluster's dynamic volume provisioner.
//
// The test cluster has no kubelet and no storage, yet StatefulSets with
// volumeClaimTemplates must bind and run. This process watches PVCs whose
// StorageClass names the provisioner below and answers each with a "local" PV
// backed by a directory under --root, pinned (node affinity) to the node the
// scheduler picked (WaitForFirstConsumer) or, for Immediate classes, with no
// pinning (hostPath). Deleting the PV removes the directory.
//
// It is built on sigs.k8s.io/sig-storage-lib-external-provisioner, the same
// controller real external provisioners use, so claim/volume handling
// (annotations, selected-node, reclaim, finalizers, events) is the real one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// provisionerName is the StorageClass .provisioner this process serves.
const provisionerName = "testcluster.onto.dev/hostpath"

// hostPathProvisioner makes one directory per PV under root.
type hostPathProvisioner struct {
	root string
}

var _ controller.Provisioner = (*hostPathProvisioner)(nil)

// Provision creates the backing directory and returns the PV for the claim.
func (p *hostPathProvisioner) Provision(_ context.Context, opts controller.ProvisionOptions) (*corev1.PersistentVolume, controller.ProvisioningState, error) {
	if opts.PVC.Spec.Selector != nil {
		return nil, controller.ProvisioningFinished, errors.New("claim Selector is not supported")
	}
	dir := filepath.Join(p.root, opts.PVName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, controller.ProvisioningFinished, fmt.Errorf("create volume directory: %w", err)
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if opts.StorageClass.ReclaimPolicy != nil {
		reclaim = *opts.StorageClass.ReclaimPolicy
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: opts.PVName},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaim,
			AccessModes:                   opts.PVC.Spec.AccessModes,
			VolumeMode:                    opts.PVC.Spec.VolumeMode,
			MountOptions:                  opts.StorageClass.MountOptions,
			Capacity: corev1.ResourceList{
				corev1.ResourceStorage: opts.PVC.Spec.Resources.Requests[corev1.ResourceStorage],
			},
		},
	}
	if opts.SelectedNodeName == "" {
		// Immediate binding: no node was chosen, so the volume must be usable anywhere.
		pv.Spec.HostPath = &corev1.HostPathVolumeSource{Path: dir}
		return pv, controller.ProvisioningFinished, nil
	}
	// WaitForFirstConsumer: a local volume pinned to the scheduler's choice, as
	// local-path-provisioner does, so zone spreading and node loss behave like a
	// real cluster with node-local disks.
	pv.Spec.Local = &corev1.LocalVolumeSource{Path: dir}
	pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{
		Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key:      corev1.LabelHostname,
				Operator: corev1.NodeSelectorOpIn,
				Values:   []string{opts.SelectedNodeName},
			}},
		}}},
	}
	return pv, controller.ProvisioningFinished, nil
}

// Delete removes the backing directory of a released PV.
func (p *hostPathProvisioner) Delete(_ context.Context, pv *corev1.PersistentVolume) error {
	var path string
	switch {
	case pv.Spec.Local != nil:
		path = pv.Spec.Local.Path
	case pv.Spec.HostPath != nil:
		path = pv.Spec.HostPath.Path
	default:
		return &controller.IgnoredError{Reason: "not a volume of this provisioner"}
	}
	// Refuse to delete outside root: a PV edited by hand must not wipe the host.
	if rel, err := filepath.Rel(p.root, path); err != nil || rel == "." || filepath.IsAbs(rel) || rel[0] == '.' {
		return fmt.Errorf("volume path %q is outside %q", path, p.root)
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("remove volume directory: %w", err)
	}
	return nil
}

func main() {
	klog.InitFlags(nil)
	kubeconfig := flag.String("kubeconfig", "", "path to the kubeconfig of the cluster")
	root := flag.String("root", "", "directory that holds one sub-directory per volume")
	flag.Parse()
	if err := run(*kubeconfig, *root); err != nil {
		klog.ErrorS(err, "provisioner failed")
		os.Exit(1)
	}
}

func run(kubeconfig, root string) error {
	if root == "" {
		return errors.New("--root is required")
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("resolve --root: %w", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("create --root: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	pc := controller.NewProvisionController(ctx, client, provisionerName, &hostPathProvisioner{root: root},
		// One process per cluster, so no leader election (and no Lease traffic).
		controller.LeaderElection(false),
		controller.Threadiness(4),
	)
	pc.Run(ctx)
	return nil
}
