// Command clink is the streaming SQL engine's one binary.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "clink:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	return fmt.Errorf("no commands yet")
}
