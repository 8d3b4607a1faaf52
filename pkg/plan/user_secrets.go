/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// UserSecret is a Secret the spec names (an external service's credentialsSecretRef)
// that the platform's pods read but the platform does not create: the user does,
// before applying.
type UserSecret struct {
	// Name of the Secret, in the platform's namespace.
	Name string `json:"name"`
	// Field is the spec field that names it.
	Field string `json:"field"`
	// Keys the rendered pods read from it, sorted.
	Keys []string `json:"keys"`
	// UsedBy are the rendered workloads that read it, as kind/name.
	UsedBy []string `json:"usedBy"`
}

// MissingSecret is a UserSecret that does not exist, or lacks keys. It holds names
// only, never a value.
type MissingSecret struct {
	UserSecret `json:",inline"`
	// Exists is false when the Secret itself is missing (every key then is).
	Exists bool `json:"exists"`
	// Missing are the keys it lacks, sorted.
	Missing []string `json:"missing"`
}

// String says what is missing, the field that names it and who reads it.
func (m MissingSecret) String() string {
	readers := strings.Join(m.UsedBy, ", ")
	if !m.Exists {
		return fmt.Sprintf("Secret %s, named by %s, does not exist; %s read its keys %s", m.Name, m.Field, readers, strings.Join(m.Keys, ", "))
	}
	return fmt.Sprintf("Secret %s, named by %s, has no key %s; %s read it", m.Name, m.Field, strings.Join(m.Missing, ", "), readers)
}

// userSecrets are the Secrets the spec's external services name, with the keys the
// rendered workloads read from them. The keys come from the rendered pods, not the
// spec, so the key names render defaults are the ones checked.
func userSecrets(p *v1alpha1.OntoPlatform, planes []render.Plane) []UserSecret {
	fields := map[string]string{}
	var names []string
	for _, c := range p.Spec.Components() {
		if ext := c.External(); ext != nil && ext.CredentialsSecretRef != nil {
			name := ext.CredentialsSecretRef.Name
			if _, ok := fields[name]; !ok {
				names = append(names, name)
				fields[name] = c.SpecPath + ".external.credentialsSecretRef"
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	keys, users := map[string]map[string]bool{}, map[string]map[string]bool{}
	for _, pl := range planes {
		for _, obj := range pl.Objects {
			for _, ref := range secretKeyRefs(obj) {
				if _, ok := fields[ref.name]; !ok {
					continue
				}
				if keys[ref.name] == nil {
					keys[ref.name], users[ref.name] = map[string]bool{}, map[string]bool{}
				}
				keys[ref.name][ref.key] = true
				users[ref.name][strings.ToLower(obj.GetKind())+"/"+obj.GetName()] = true
			}
		}
	}
	var out []UserSecret
	for _, name := range names {
		if keys[name] == nil {
			continue // no pod reads it (every user of the service is disabled)
		}
		out = append(out, UserSecret{Name: name, Field: fields[name], Keys: sortedSet(keys[name]), UsedBy: sortedSet(users[name])})
	}
	return out
}

type secretKeyRef struct{ name, key string }

// secretKeyRefs are the secretKeyRefs of the containers of a workload's pod template.
func secretKeyRefs(obj *unstructured.Unstructured) []secretKeyRef {
	var out []secretKeyRef
	for _, list := range []string{"initContainers", "containers"} {
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", list)
		for _, c := range containers {
			env, _, _ := unstructured.NestedSlice(asMap(c), "env")
			for _, e := range env {
				ref, ok, _ := unstructured.NestedStringMap(asMap(e), "valueFrom", "secretKeyRef")
				if ok && ref["name"] != "" {
					out = append(out, secretKeyRef{name: ref["name"], key: ref["key"]})
				}
			}
		}
	}
	return out
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func sortedSet(s map[string]bool) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// missingSecrets checks d's user Secrets in the cluster: which do not exist, and
// which lack a key the pods read. They are read from the API server, whatever the
// planner's live source: the watch caches only the platforms' own objects, and a
// user's Secret is not one. Only the keys are kept; the values are dropped as soon as
// they are read. nsExists false means none can exist.
func (pl *Planner) missingSecrets(ctx context.Context, d *Desired, nsExists bool) ([]MissingSecret, error) {
	var out []MissingSecret
	for _, us := range d.UserSecrets {
		m := MissingSecret{UserSecret: us, Missing: us.Keys}
		if nsExists {
			s, err := pl.Clients.Kube.CoreV1().Secrets(d.Namespace).Get(ctx, us.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return nil, fmt.Errorf("read Secret %s/%s (%s): %w", d.Namespace, us.Name, us.Field, err)
			default:
				m.Exists, m.Missing = true, nil
				for _, k := range us.Keys {
					if _, ok := s.Data[k]; !ok {
						m.Missing = append(m.Missing, k)
					}
				}
			}
		}
		if len(m.Missing) > 0 {
			out = append(out, m)
		}
	}
	return out, nil
}

// Fix is the command or step that makes the Secret whole, in namespace.
func (m MissingSecret) Fix(namespace string) string {
	if m.Exists {
		return fmt.Sprintf("add the keys to Secret %s/%s", namespace, m.Name)
	}
	parts := make([]string, 0, len(m.Keys))
	for _, k := range m.Keys {
		parts = append(parts, "--from-literal="+k+"=...")
	}
	return fmt.Sprintf("kubectl -n %s create secret generic %s %s", namespace, m.Name, strings.Join(parts, " "))
}

// missingSecretWarnings are the plan's warnings of the missing user Secrets: apply
// refuses to write while there are any.
func missingSecretWarnings(namespace string, missing []MissingSecret) []string {
	var out []string
	for _, m := range missing {
		out = append(out, fmt.Sprintf("%s: %s; apply writes nothing until then", m, m.Fix(namespace)))
	}
	return out
}
