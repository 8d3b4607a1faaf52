// Command coredns is the test cluster's DNS server: CoreDNS with only the plugins the
// real nodes' Corefile uses (hack/testcluster/nodes.sh), so the build stays small.
// CoreDNS's own main imports every plugin; this one registers these and runs the same
// coremain.
package main

import (
	"github.com/coredns/coredns/coremain"

	// Each import registers one plugin (its init calls plugin.Register). bind must be
	// imported explicitly: the Corefile binds to the node network's gateway address.
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
