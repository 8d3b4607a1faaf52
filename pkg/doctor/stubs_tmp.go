package doctor

func preChecks() []Check      { return nil }
func platformChecks() []Check { return nil }
func workloadChecks() []Check { return nil }
func nodeChecks() []Check     { return nil }
func scalingChecks() []Check  { return nil }
func tlsChecks() []Check      { return nil }
