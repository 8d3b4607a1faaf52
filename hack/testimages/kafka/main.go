/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command kafka-fake serves the Kafka protocol with franz-go's kfake, an in-memory
// broker, for the tests on real nodes: no Kafka these machines can reach runs on
// them, so the platform's services use this one through
// spec.infrastructure.kafka.external. One broker on port 9092 (ONTO_KAFKA_PORT),
// advertised at ONTO_KAFKA_ADVERTISED_HOST (the pod's IP, from the downward API): a
// client bootstraps through a Service and then connects to the address the
// metadata names, which must be the pod's own. Topics are created on first use.
// The variables carry the ONTO_ prefix because the kubelet gives every pod
// KAFKA_PORT=tcp://... of a Service named kafka in its namespace.
package main

import (
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	host := os.Getenv("ONTO_KAFKA_ADVERTISED_HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	port := 9092
	if p := os.Getenv("ONTO_KAFKA_PORT"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			log.Fatalf("ONTO_KAFKA_PORT %q: %v", p, err)
		}
		port = n
	}
	// kfake listens on 127.0.0.1 and advertises the listener's address; listen on
	// host instead, so that the advertised address is one other pods reach.
	listen := func(network, address string) (net.Listener, error) {
		_, p, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		return net.Listen(network, net.JoinHostPort(host, p))
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.ListenFn(listen), kfake.AllowAutoTopicCreation())
	if err != nil {
		log.Fatalf("start the broker: %v", err)
	}
	fmt.Printf("kafka-fake: one broker on %v\n", c.ListenAddrs())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
	c.Close()
}
