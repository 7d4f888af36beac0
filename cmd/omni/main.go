// Command omni sits between an AI coding agent and the output of its tools:
// it folds what a reader was already shown into markers with handles,
// records every decision as events in an embedded NATS JetStream log, and
// gives any folded bytes back exactly with `omni retrieve`.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], stdStreams()))
}
