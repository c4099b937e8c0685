//go:build !linux

package main

import "github.com/spf13/cobra"

// addLinkFlag: network namespaces are Linux's; elsewhere the link runs
// in the host's network with its congestion control.
func addLinkFlag(*cobra.Command) {}

func linkNamespace(*cobra.Command) (bool, error) { return false, nil }
