package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"sitebox/internal/admin"
	"sitebox/internal/cache"
)

// newCacheLsCmd is `sitebox cache ls`. It reads the listing a page at a
// time (each admin call costs its page, however many files the cache
// holds) and stops after --limit files, naming the cursor of the rest.
func newCacheLsCmd(f *adminFlags, asJSON *bool) *cobra.Command {
	var (
		limit int
		after string
	)
	cmd := &cobra.Command{
		Use:   "ls [PREFIX]",
		Short: "List cached files (all, or those at or below PREFIX), in path order",
		Long: `List cached files (all, or those at or below PREFIX), in path order.
At most --limit files are listed; when more follow, the last line says how
to list the next ones (--after the last path shown).`,
		Example: `  sitebox cache ls /store/user
  sitebox cache ls /store --limit 100 --after /store/user/a/f0099.root`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prefix := ""
			if len(args) == 1 {
				prefix = args[0]
			}
			if limit < 0 {
				return fmt.Errorf("--limit %d: want 0 (all) or more", limit)
			}
			return withClient(cmd, f, func(ctx context.Context, c *admin.Client) error {
				es, more, err := listPages(ctx, c, prefix, after, limit)
				if err != nil {
					return err
				}
				if *asJSON {
					err = printJSON(cmd.OutOrStdout(), es)
				} else {
					printEntries(cmd.OutOrStdout(), es, prefix)
				}
				if more {
					w := cmd.OutOrStdout()
					if *asJSON {
						w = cmd.ErrOrStderr() // stdout stays one JSON document
					}
					fmt.Fprintf(w, "more cached files follow; list them with --after %s\n", es[len(es)-1].Path)
				}
				return err
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 10_000, "list at most this many files (0: all)")
	cmd.Flags().StringVar(&after, "after", "", "start after this path (the last one of a previous listing)")
	return cmd
}

// listPages reads pages until limit files (all when 0) or the end; more
// reports that files follow.
func listPages(ctx context.Context, c *admin.Client, prefix, after string, limit int) (es []cache.EntryInfo, more bool, err error) {
	for {
		want := cache.MaxListPage
		if limit > 0 {
			want = min(want, limit-len(es)+1) // one more tells whether the listing goes on
		}
		page, err := c.EntriesPage(ctx, prefix, after, want)
		if err != nil {
			return nil, false, err
		}
		es = append(es, page...)
		if limit > 0 && len(es) > limit {
			return es[:limit], true, nil
		}
		if len(page) < want {
			return es, false, nil
		}
		after = page[len(page)-1].Path
	}
}
