package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/cluster"
)

// webhooksCmd is `rath webhooks`: URLs subscribed to run events.
func (a *app) webhooksCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "webhooks",
		Short: "Subscribe URLs to run events (signed POSTs from the cluster's workers, retried with backoff)",
	}
	c.AddCommand(a.webhooksAddCmd(), a.webhooksLsCmd(), a.webhooksRmCmd(), a.webhooksDeliveriesCmd())
	return c
}

func (a *app) webhooksAddCmd() *cobra.Command {
	var events []string
	var ref string
	c := &cobra.Command{
		Use:   "add URL [--events done,failed,...] [--secret secret://env/NAME]",
		Short: "Subscribe URL to run state changes; prints its secret once",
		Long: `Subscribe URL to run state changes (all, or those of --events: queued,
unroutable, running, waiting_approval, needs_review, done, failed, cancelled).

Each delivery is a POST of {"id", "event": "run.state", "run", "at"} with the
headers X-Rath-Timestamp (Unix seconds), X-Rath-Delivery (its id) and
X-Rath-Signature: sha256=HEX, the HMAC-SHA256 keyed by the webhook's secret of
the timestamp, ".", and the body (cluster.VerifyWebhook checks it in Go).
A 2xx answer delivers it; 410 Gone unsubscribes the webhook; anything else is
retried with backoff, up to 8 attempts. The secret is shown only here; with
--secret, the deliveries are signed with the key a secret reference names
(secret://env/NAME, secret://file/PATH), which the store keeps instead of a
value and each worker resolves as it delivers.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withCluster(ctx, func(cl adminOps) error {
				h, err := cl.AddWebhookWith(ctx, args[0], events, cluster.WebhookOptions{Secret: ref})
				if errors.Is(err, cluster.ErrBadWebhook) {
					return usageErr("%v", err)
				}
				if err != nil {
					return err
				}
				if a.jsonOut {
					return a.printJSON(struct {
						*cluster.Webhook
						Secret string `json:"secret,omitempty"`
					}{h, h.Secret})
				}
				fmt.Fprintln(a.stdout, h.ID)
				if h.SecretRef != "" {
					fmt.Fprintf(a.stderr, "webhook %s added for %s; its deliveries are signed with %s\n", h.ID, h.URL, h.SecretRef)
					return nil
				}
				fmt.Fprintf(a.stdout, "secret: %s\n", h.Secret)
				fmt.Fprintf(a.stderr, "webhook %s added for %s; keep its secret now: it will not be shown again\n", h.ID, h.URL)
				return nil
			})
		},
	}
	c.Flags().StringSliceVar(&events, "events", nil, "the run states to deliver (default all): done,failed,...")
	c.Flags().StringVar(&ref, "secret", "", "sign the deliveries with the key this secret reference names (secret://env/NAME, secret://file/PATH)")
	return c
}

func (a *app) webhooksLsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "The webhooks: id, URL, events, created",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return a.withCluster(ctx, func(cl adminOps) error {
				hs, err := cl.Webhooks(ctx)
				if err != nil {
					return err
				}
				if a.jsonOut {
					return a.printJSON(hs)
				}
				printWebhooks(a.stdout, hs)
				return nil
			})
		},
	}
}

// printWebhooks writes webhooks as a table.
func printWebhooks(w io.Writer, hs []cluster.Webhook) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tURL\tEVENTS\tCREATED")
	for _, h := range hs {
		events := strings.Join(h.Events, ",")
		if events == "" {
			events = "all"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.ID, h.URL, events, utc(h.Created))
	}
	tw.Flush()
}

func (a *app) webhooksRmCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID",
		Short: "Unsubscribe a webhook (its deliveries still list)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id, err := sessionID(args[0])
			if err != nil {
				return err
			}
			return a.withCluster(ctx, func(cl adminOps) error {
				if err := cl.RemoveWebhook(ctx, id); err != nil {
					return err
				}
				if a.jsonOut {
					return a.printJSON(map[string]any{"id": id, "removed": true})
				}
				fmt.Fprintf(a.stderr, "webhook %s removed\n", id)
				return nil
			})
		},
	}
}

func (a *app) webhooksDeliveriesCmd() *cobra.Command {
	var limit int
	c := &cobra.Command{
		Use:   "deliveries ID [--limit N]",
		Short: "A webhook's latest deliveries: event, run, state, attempts, status and outcome",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id, err := sessionID(args[0])
			if err != nil {
				return err
			}
			return a.withCluster(ctx, func(cl adminOps) error {
				ds, err := cl.Deliveries(ctx, id, limit)
				if err != nil {
					return err
				}
				if a.jsonOut {
					return a.printJSON(ds)
				}
				printDeliveries(a.stdout, ds)
				return nil
			})
		},
	}
	c.Flags().IntVar(&limit, "limit", 50, "how many of the latest deliveries to list")
	return c
}

// printDeliveries writes deliveries as a table.
func printDeliveries(w io.Writer, ds []cluster.Delivery) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEVENT\tRUN\tSTATE\tATTEMPTS\tSTATUS\tOUTCOME\tAT\tERROR")
	for _, d := range ds {
		status := "-"
		if d.Status != 0 {
			status = fmt.Sprint(d.Status)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", d.ID, d.Event, d.Run, d.State, d.Attempt, status, d.Outcome, utc(d.At), orDash(d.Error))
	}
	tw.Flush()
}
