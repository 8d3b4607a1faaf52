/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
)

// Kafka's KRaft topology. The static voter list (controller.quorum.voters) is part of
// every node's configuration and cannot change under a running quorum, so it must not
// depend on the broker count:
//
//   - kafka.replicas >= 3: kafkaControllers dedicated controllers (StatefulSet
//     kafka-controller) and `replicas` brokers (StatefulSet kafka) that scale freely;
//     the voters are the controllers.
//   - kafka.replicas < 3: kafka-0 is broker and controller, the quorum's one voter;
//     a second replica is a broker only.
//
// Crossing the boundary changes the voter list; the CRD's transition rule on
// spec.infrastructure.kafka and spec.CheckTransition refuse it.
const (
	// kafkaControllers is the size of a dedicated quorum: it survives one controller
	// down, and a drain (the PDB lets one go at a time).
	kafkaControllers = 3
	// kafkaDedicatedFrom is the replica count from which the controllers are dedicated.
	kafkaDedicatedFrom = 3
	// kafkaControllerIDBase is added to a controller's ordinal for its node id. Brokers
	// keep their ordinal (partition assignments then read as pod names) and number at
	// most 100 (the schema's maximum of replicas), so the two ranges never meet, and a
	// broker added later can never take a voter's id.
	kafkaControllerIDBase = 1000
	kafkaPort             = 9092
	kafkaControllerPort   = 9093
	// kafkaControllerHeap keeps the controllers' JVM within their small memory limit
	// (the image's default heap is 1G).
	kafkaControllerHeap = "-Xms512m -Xmx512m"
	kafkaLogDirs        = "/var/lib/kafka/data/kraft"
	// kafkaConfigInit is the init container of the kafka and kafka-controller pods
	// that copies the image's configuration directory to a writable volume.
	kafkaConfigInit = "config"
)

// kafkaDataLayout is the data layout of the kafka StatefulSet (AnnotationDataLayout):
// a KRaft cluster whose id is the generated Secret's and whose voters are fixed by
// topology (kafkaVoters). Either changing makes brokers refuse their old data.
const kafkaDataLayout = "kraft-fixed-quorum-v1"

// KafkaDedicatedControllers reports whether a Kafka of replicas runs dedicated
// controllers (kafka-controller) rather than one combined node.
func KafkaDedicatedControllers(replicas int32) bool {
	return replicas >= kafkaDedicatedFrom
}

// kafkaOverlays configures the brokers of o (the kafka base) and, with dedicated
// controllers, adds the kafka-controller overlay.
func (b *builder) kafkaOverlays(c v1alpha1.Component, o *overlay) ([]*overlay, error) {
	replicas := c.DesiredReplicas()
	// Brokers created before the fixed quorum (every broker a voter, the cluster id a
	// hash of the platform's name) carry no layout: the planner refuses to roll them.
	o.patch("StatefulSet", v1alpha1.ComponentKafka).set(map[string]any{v1alpha1.AnnotationDataLayout: kafkaDataLayout}, "metadata", "annotations")
	if !KafkaDedicatedControllers(replicas) {
		o.addConfig("kafka-config", b.kafkaTLSConfig(b.kafkaBrokerConfig(replicas, true)), nil)
		return []*overlay{o}, nil
	}
	o.addConfig("kafka-config", b.kafkaTLSConfig(b.kafkaBrokerConfig(replicas, false)), nil)
	// Brokers serve no controller port (kafkaBrokerPatch drops it from their pods).
	deleteItem(o.patch("Service", "kafka-headless").field("spec"), "ports", map[string]any{"port": kafkaControllerPort, "protocol": "TCP"})
	co, err := b.kafkaControllerOverlay(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v1alpha1.ComponentKafkaController, err)
	}
	return []*overlay{o, co}, nil
}

// kafkaBrokerPatch adds to the patch of the kafka StatefulSet what follows the
// topology: with dedicated controllers the brokers serve no controller port, which the
// patch deletes by its number, wherever the base lists it.
func kafkaBrokerPatch(p *objPatch, replicas int32) {
	if !KafkaDedicatedControllers(replicas) {
		return
	}
	deleteItem(p.container(v1alpha1.ComponentKafka), "ports", map[string]any{"containerPort": kafkaControllerPort, "protocol": "TCP"})
}

// kafkaControllerOverlay renders the dedicated controllers from their base, with the
// kafka image of the spec and release: controllers and brokers run one Kafka version.
func (b *builder) kafkaControllerOverlay(c v1alpha1.Component) (*overlay, error) {
	image, err := b.rel.Image(v1alpha1.ComponentKafka, b.spec.Global.ImageRegistry, c.Stateful.Image)
	if err != nil {
		return nil, err
	}
	// The controllers' resources and storage are fixed (their base's): the spec's
	// kafka.resources and storage size brokers.
	o, err := b.statefulOverlay(v1alpha1.ComponentKafkaController, c.Plane, image, kafkaControllers, nil, "")
	if err != nil {
		return nil, err
	}
	o.addConfig("kafka-controller-config", b.kafkaTLSConfig(map[string]string{
		"NODE_ID_BASE":                         strconv.Itoa(kafkaControllerIDBase),
		"KAFKA_PROCESS_ROLES":                  "controller",
		"KAFKA_LISTENERS":                      fmt.Sprintf("CONTROLLER://:%d", kafkaControllerPort),
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT",
		"KAFKA_CONTROLLER_LISTENER_NAMES":      "CONTROLLER",
		"KAFKA_CONTROLLER_QUORUM_VOTERS":       b.kafkaVoters(true),
		"KAFKA_LOG_DIRS":                       kafkaLogDirs,
		"KAFKA_HEAP_OPTS":                      kafkaControllerHeap,
	}), nil)
	return o, nil
}

// kafkaBrokerConfig is the brokers' configuration. combined makes kafka-0 the quorum's
// one controller as well (VOTER_PROCESS_ROLES and VOTER_LISTENERS, which the base's
// start script gives pod 0 only). Replication factors follow the broker count, capped
// at the usual 3 (and min.insync at 2), so a single broker still starts.
func (b *builder) kafkaBrokerConfig(replicas int32, combined bool) map[string]string {
	rf := strconv.Itoa(int(min(replicas, 3)))
	isr := strconv.Itoa(int(max(min(replicas-1, 2), 1)))
	brokerListeners := fmt.Sprintf("PLAINTEXT://:%d", kafkaPort)
	env := map[string]string{
		"KAFKA_PROCESS_ROLES":                            "broker",
		"KAFKA_LISTENERS":                                brokerListeners,
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP":           "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"KAFKA_CONTROLLER_LISTENER_NAMES":                "CONTROLLER",
		"KAFKA_INTER_BROKER_LISTENER_NAME":               "PLAINTEXT",
		"KAFKA_CONTROLLER_QUORUM_VOTERS":                 b.kafkaVoters(!combined),
		"KAFKA_LOG_DIRS":                                 kafkaLogDirs,
		"KAFKA_DEFAULT_REPLICATION_FACTOR":               rf,
		"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR":         rf,
		"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": rf,
		"KAFKA_MIN_INSYNC_REPLICAS":                      isr,
		"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR":            isr,
	}
	if combined {
		env["VOTER_PROCESS_ROLES"] = "broker,controller"
		env["VOTER_LISTENERS"] = fmt.Sprintf("%s,CONTROLLER://:%d", brokerListeners, kafkaControllerPort)
	}
	return env
}

// kafkaVoters is the static voter list: the dedicated controllers, or kafka-0 alone.
// It depends on nothing but the topology, so scaling brokers leaves it as it is.
func (b *builder) kafkaVoters(dedicated bool) string {
	ns := b.p.Namespace
	if !dedicated {
		return fmt.Sprintf("0@kafka-0.kafka-headless.%s.svc:%d", ns, kafkaControllerPort)
	}
	voters := make([]string, 0, kafkaControllers)
	for i := range kafkaControllers {
		voters = append(voters, fmt.Sprintf("%d@kafka-controller-%d.kafka-controller-headless.%s.svc:%d",
			kafkaControllerIDBase+i, i, ns, kafkaControllerPort))
	}
	return strings.Join(voters, ",")
}
