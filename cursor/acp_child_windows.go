package cursor

// askToStop asks the agent to stop; Windows has no signal for one process
// alone, so its tree is asked.
func askToStop(c Child) { signalChild(c, false) }
