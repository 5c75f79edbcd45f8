package cluster

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openrath/rath/store"
)

// metricsTimeout bounds one scrape's reads of the store and the queue.
const metricsTimeout = 10 * time.Second

var (
	descRuns    = prometheus.NewDesc("rath_cluster_runs", "Runs by state (as stored; a cancel asked for is counted in the run's state).", []string{"state"}, nil)
	descWorkers = prometheus.NewDesc("rath_cluster_workers", "Workers that have not ended, by whether they are alive.", []string{"alive"}, nil)
	descQueued  = prometheus.NewDesc("rath_cluster_queue_runs", "Runs of a pool's queue, by state (queued or running).", []string{"queue", "state"}, nil)
	descAge     = prometheus.NewDesc("rath_cluster_queue_age_seconds", "How long the longest-waiting job of a pool's queue has waited (0 if none).", []string{"queue"}, nil)
	descScrape  = prometheus.NewDesc("rath_cluster_scrape_errors", "1 if the last scrape of the cluster failed (the store or the queue did not answer).", nil, nil)
)

// Collector is the cluster's state as Prometheus metrics, read from the
// store and the queue when scraped: runs by state, workers, each pool's
// queued and running runs and the age of its longest wait. (Counts, not
// reads of every record: a scrape costs a query per state and pool.)
func (c *Cluster) Collector() prometheus.Collector { return collector{c} }

type collector struct{ c *Cluster }

func (m collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRuns, descWorkers, descQueued, descAge, descScrape} {
		ch <- d
	}
}

func (m collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), metricsTimeout)
	defer cancel()
	failed := 0.0
	if err := m.collect(ctx, ch); err != nil {
		failed = 1
		m.c.log.Warn("cluster metrics", "err", err)
	}
	ch <- prometheus.MustNewConstMetric(descScrape, prometheus.GaugeValue, failed)
}

func (m collector) collect(ctx context.Context, ch chan<- prometheus.Metric) error {
	st := m.c.rt.Store
	for _, s := range states {
		n, err := st.Count(ctx, store.Filter{Labels: map[string]string{LabelKind: "run", LabelState: string(s)}})
		if err != nil {
			return err
		}
		ch <- prometheus.MustNewConstMetric(descRuns, prometheus.GaugeValue, float64(n), string(s))
	}
	ws, err := m.c.workers(ctx)
	if err != nil {
		return err
	}
	alive := map[bool]int{}
	for _, w := range ws {
		alive[w.Alive]++
	}
	for _, a := range []bool{true, false} {
		ch <- prometheus.MustNewConstMetric(descWorkers, prometheus.GaugeValue, float64(alive[a]), map[bool]string{true: "true", false: "false"}[a])
	}
	pools, err := m.c.Queues(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, p := range pools {
		ch <- prometheus.MustNewConstMetric(descQueued, prometheus.GaugeValue, float64(p.Queued), p.Queue, string(StateQueued))
		ch <- prometheus.MustNewConstMetric(descQueued, prometheus.GaugeValue, float64(p.Running), p.Queue, string(StateRunning))
		at, err := m.c.q.oldest(ctx, p.Queue)
		if err != nil {
			return err
		}
		age := 0.0
		if !at.IsZero() && at.Before(now) {
			age = now.Sub(at).Seconds()
		}
		ch <- prometheus.MustNewConstMetric(descAge, prometheus.GaugeValue, age, p.Queue)
	}
	return nil
}
