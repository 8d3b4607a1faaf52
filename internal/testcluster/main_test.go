package testcluster_test

import (
	"testing"

	"github.com/coomia-dip/kubectl-onto/internal/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }
