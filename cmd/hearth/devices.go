package main

import (
	"context"
	"fmt"

	"github.com/hearth-dcop/hearth/devices"
)

// runDevices prints the device catalogue (`hearth help devices`).
func runDevices(_ context.Context, e *env, _ []string) int {
	if err := devices.WriteCatalogue(e.stdout); err != nil {
		fmt.Fprintln(e.stderr, "hearth devices:", err)
		return exitFailed
	}
	return exitOK
}
