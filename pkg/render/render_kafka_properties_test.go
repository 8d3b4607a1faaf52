/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// kafkaWithReplicas renders the production example with kafka.replicas n.
func kafkaWithReplicas(t *testing.T, n int32) []*unstructured.Unstructured {
	t.Helper()
	p, rel := production(t)
	p.Spec.Infrastructure.Kafka.Replicas = ptr.To(n)
	return mustRender(t, p, rel)
}

// configOf is the data of the hashed ConfigMap whose generator name is name.
func configOf(t *testing.T, objs []*unstructured.Unstructured, name string) map[string]string {
	t.Helper()
	hashed := regexp.MustCompile("^" + regexp.QuoteMeta(name) + "-[a-z0-9]{10}$")
	for _, u := range objs {
		if u.GetKind() == "ConfigMap" && hashed.MatchString(u.GetName()) {
			return convert[corev1.ConfigMap](t, u).Data
		}
	}
	t.Fatalf("no ConfigMap %s", name)
	return nil
}

// voterHosts are the hosts of a voter list ("id@host:port,...") by node id.
func voterHosts(t *testing.T, voters string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range strings.Split(voters, ",") {
		id, addr, ok := strings.Cut(v, "@")
		host, _, ok2 := strings.Cut(addr, ":")
		if !ok || !ok2 {
			t.Fatalf("voter %q is not id@host:port", v)
		}
		out[id] = host
	}
	return out
}

// TestKafkaVotersDoNotFollowBrokers: from 3 replicas on, the voter list is the same
// for every broker count and names only the three dedicated controllers, whose node
// ids no broker can take; brokers and controllers share it, and brokers scale while
// the controllers stay at three.
func TestKafkaVotersDoNotFollowBrokers(t *testing.T) {
	var first string
	for _, n := range []int32{3, 5, 9, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			objs := kafkaWithReplicas(t, n)
			brokers := configOf(t, objs, "kafka-config")
			controllers := configOf(t, objs, "kafka-controller-config")
			voters := brokers["KAFKA_CONTROLLER_QUORUM_VOTERS"]
			if first == "" {
				first = voters
			}
			if voters != first {
				t.Errorf("voters with %d brokers:\n%s\nwant those with 3:\n%s", n, voters, first)
			}
			if controllers["KAFKA_CONTROLLER_QUORUM_VOTERS"] != voters {
				t.Errorf("controllers' voters %q differ from the brokers' %q", controllers["KAFKA_CONTROLLER_QUORUM_VOTERS"], voters)
			}
			hosts := voterHosts(t, voters)
			if len(hosts) != kafkaControllers {
				t.Errorf("%d voters, want %d", len(hosts), kafkaControllers)
			}
			for id, host := range hosts {
				if !strings.HasPrefix(host, "kafka-controller-") || !strings.Contains(host, ".kafka-controller-headless.") {
					t.Errorf("voter %s@%s is not a dedicated controller", id, host)
				}
				// Brokers' node ids are their ordinals, 0..n-1.
				if slices.Contains(brokerIDs(n), id) {
					t.Errorf("voter id %s is also a broker's node id", id)
				}
			}
			if brokers["KAFKA_PROCESS_ROLES"] != "broker" || brokers["VOTER_PROCESS_ROLES"] != "" {
				t.Errorf("brokers run roles %q (voter roles %q), want broker only", brokers["KAFKA_PROCESS_ROLES"], brokers["VOTER_PROCESS_ROLES"])
			}
			if controllers["KAFKA_PROCESS_ROLES"] != "controller" || controllers["KAFKA_ADVERTISED_LISTENERS"] != "" {
				t.Errorf("controllers run roles %q, advertised %q; want controller, none (the image refuses one)",
					controllers["KAFKA_PROCESS_ROLES"], controllers["KAFKA_ADVERTISED_LISTENERS"])
			}
			if got := *convert[appsv1.StatefulSet](t, find(objs, "StatefulSet", v1alpha1.ComponentKafka)).Spec.Replicas; got != n {
				t.Errorf("kafka runs %d brokers, want %d", got, n)
			}
			if got := *convert[appsv1.StatefulSet](t, find(objs, "StatefulSet", v1alpha1.ComponentKafkaController)).Spec.Replicas; got != kafkaControllers {
				t.Errorf("kafka-controller runs %d controllers, want %d", got, kafkaControllers)
			}
			if find(objs, "PodDisruptionBudget", v1alpha1.ComponentKafkaController) == nil {
				t.Error("the controllers have no PodDisruptionBudget")
			}
		})
	}
}

func brokerIDs(n int32) []string {
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

// TestKafkaCombinedNode: below 3 replicas there are no dedicated controllers and the
// one voter is kafka-0, whatever the count, so going from 1 to 2 keeps the quorum.
func TestKafkaCombinedNode(t *testing.T) {
	for _, n := range []int32{1, 2} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			objs := kafkaWithReplicas(t, n)
			for _, u := range objs {
				if u.GetLabels()[LabelName] == v1alpha1.ComponentKafkaController {
					t.Errorf("%d replicas render %s %s", n, u.GetKind(), u.GetName())
				}
			}
			cfg := configOf(t, objs, "kafka-config")
			if got := voterHosts(t, cfg["KAFKA_CONTROLLER_QUORUM_VOTERS"]); len(got) != 1 || !strings.HasPrefix(got["0"], "kafka-0.kafka-headless.") {
				t.Errorf("voters %v, want kafka-0 alone, as node 0", got)
			}
			if cfg["VOTER_PROCESS_ROLES"] != "broker,controller" || !strings.Contains(cfg["VOTER_LISTENERS"], "CONTROLLER://") {
				t.Errorf("kafka-0's roles %q and listeners %q do not make it the controller", cfg["VOTER_PROCESS_ROLES"], cfg["VOTER_LISTENERS"])
			}
			ss := convert[appsv1.StatefulSet](t, find(objs, "StatefulSet", v1alpha1.ComponentKafka))
			if !strings.Contains(strings.Join(ss.Spec.Template.Spec.Containers[0].Command, " "), "VOTER_PROCESS_ROLES") {
				t.Error("the kafka start script does not read VOTER_PROCESS_ROLES: kafka-0 would not be a controller")
			}
		})
	}
}

// TestKafkaControllersAreNotBrokers: no Service that clients or brokers use selects
// the controllers, the brokers' pods and Services serve no controller port, and every
// kafka pod (controllers included) takes the cluster id from the generated Secret,
// never from a rendered value.
func TestKafkaControllersAreNotBrokers(t *testing.T) {
	objs := kafkaWithReplicas(t, 3)
	controllerLabels := convert[appsv1.StatefulSet](t, find(objs, "StatefulSet", v1alpha1.ComponentKafkaController)).Spec.Template.Labels
	for _, u := range objs {
		if u.GetKind() != "Service" {
			continue
		}
		svc := convert[corev1.Service](t, u)
		selects := len(svc.Spec.Selector) > 0
		for k, v := range svc.Spec.Selector {
			selects = selects && controllerLabels[k] == v
		}
		if selects && svc.Name != "kafka-controller-headless" {
			t.Errorf("Service %s selects the controllers", svc.Name)
		}
		if strings.HasPrefix(svc.Name, "kafka") && svc.Name != "kafka-controller-headless" {
			for _, port := range svc.Spec.Ports {
				if port.Port == kafkaControllerPort {
					t.Errorf("broker Service %s serves the controller port", svc.Name)
				}
			}
		}
	}
	broker := convert[appsv1.StatefulSet](t, find(objs, "StatefulSet", v1alpha1.ComponentKafka)).Spec.Template
	if got := containerPorts(broker); !slices.Equal(got, []int{kafkaPort}) {
		t.Errorf("broker ports %v, want [%d]", got, kafkaPort)
	}
	for _, name := range []string{v1alpha1.ComponentKafka, v1alpha1.ComponentKafkaController} {
		tpl := convert[appsv1.StatefulSet](t, find(objs, "StatefulSet", name)).Spec.Template
		var ref *corev1.SecretKeySelector
		for _, e := range tpl.Spec.Containers[0].Env {
			if e.Name == "CLUSTER_ID" {
				if e.Value != "" || e.ValueFrom == nil {
					t.Errorf("%s: CLUSTER_ID is a rendered value, not the generated key", name)
					continue
				}
				ref = e.ValueFrom.SecretKeyRef
			}
		}
		if ref == nil || ref.Name != v1alpha1.ComponentKafka || ref.Key != "cluster-id" {
			t.Errorf("%s: CLUSTER_ID from %+v, want Secret kafka key cluster-id", name, ref)
		}
		if cfg := configOf(t, objs, name+"-config"); cfg["CLUSTER_ID"] != "" {
			t.Errorf("%s: the ConfigMap holds a cluster id", name)
		}
	}
	secret := find(objs, "Secret", v1alpha1.ComponentKafka)
	if secret == nil {
		t.Fatal("no Secret kafka")
	}
	if got := secret.GetAnnotations()[v1alpha1.AnnotationGenerateFormat]; got != "cluster-id="+v1alpha1.GenerateFormatKafkaClusterID {
		t.Errorf("Secret kafka's %s is %q", v1alpha1.AnnotationGenerateFormat, got)
	}
}

// TestKafkaBrokersReachControllers: with isolation on, the brokers reach the
// controllers' port 9093, the controllers each other, and the platform's services
// never reach the controllers.
func TestKafkaBrokersReachControllers(t *testing.T) {
	objs := kafkaWithReplicas(t, 5)
	nps := networkPoliciesOf(t, objs)
	tpls := podTemplates(t, objs)
	ns := find(objs, "StatefulSet", v1alpha1.ComponentKafka).GetNamespace()
	controller := tpls["StatefulSet/"+v1alpha1.ComponentKafkaController]
	broker := tpls["StatefulSet/"+v1alpha1.ComponentKafka]
	if !nps.admits(t, ns, controller.Labels, peer{namespace: ns, labels: broker.Labels}, kafkaControllerPort) {
		t.Error("brokers do not reach the controllers on 9093")
	}
	if !nps.admits(t, ns, controller.Labels, peer{namespace: ns, labels: controller.Labels}, kafkaControllerPort) {
		t.Error("controllers do not reach each other on 9093")
	}
	for id, src := range tpls {
		if strings.HasPrefix(id, "Deployment/") && nps.admits(t, ns, controller.Labels, peer{namespace: ns, labels: src.Labels}, kafkaControllerPort) {
			t.Errorf("%s reaches the controllers", id)
		}
	}
}
