//go:build !sitebox_wip

package main

import "github.com/spf13/cobra"

// Temporary until the frontends land: the real commands are in serve.go.
func addServeCommand(root *cobra.Command)   {}
func addConfigCommands(root *cobra.Command) {}
func addBenchCommands(root *cobra.Command)  {}
