package main

import "github.com/spf13/cobra"

func addServeCommand(root *cobra.Command) {}

func addConfigCommands(root *cobra.Command) {}
