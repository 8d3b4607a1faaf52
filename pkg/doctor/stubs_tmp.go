package doctor

func preChecks() []Check { return nil }
