package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// replicasResult is the replicas step's: a load into one Fuseki against
// the same load into two copies (kgrag --store A,B), and the lag between
// the copies over repeated diffs.
type replicasResult struct {
	Triples num    `json:"triples_per_copy"`
	One     num    `json:"one_store_s"`
	OneRSS  num    `json:"one_store_kgrag_peak_rss_mb"`
	Two     num    `json:"two_copies_s"`
	TwoRSS  num    `json:"two_copies_kgrag_peak_rss_mb"`
	Ratio   num    `json:"ratio"`
	Diffs   []num  `json:"diff_s"`
	LagMS   []num  `json:"lag_ms"`
	P50     num    `json:"lag_p50_ms"`
	P95     num    `json:"lag_p95_ms"`
	Note    string `json:"note,omitempty"`
}

// replicaRounds is how many --diff loads the lag is measured over.
const replicaRounds = 6

// replicas loads the synthetic set with --diff into one fresh Fuseki, and
// into two fresh Fusekis as copies of one store; then loads the 1%
// changed copy and the base in turn into the copies, polling each copy's
// load record, to time how far apart the copies show each load.
func (b *bench) replicas(ctx context.Context) (string, any, error) {
	b.logf("replicas: one Fuseki against two copies (--store A,B), and the lag between the copies")
	none := num(nan())
	res := replicasResult{Triples: none, One: none, OneRSS: none, Two: none, TwoRSS: none, Ratio: none, P50: none, P95: none}
	base, changed, note, err := b.diffCopies(ctx)
	if err != nil || note != "" {
		res.Note = note
		return b.replicasSection(res), res, err
	}
	load := func(tag, stores, input string) (usage, error) {
		return b.measure(ctx, tag, nil, b.kgrag, "load", "-q", "--diff", "--input", input,
			"--store", stores, "--store-type", "fuseki", "--graph", graphIRI)
	}
	// One store.
	port, done, err := b.freshStore(ctx, "fuseki", "fuseki-one")
	if err != nil {
		done()
		res.Note = "not run: fuseki did not start"
		return b.replicasSection(res), res, ctx.Err()
	}
	u, err := load("replicas-one", storeURL("fuseki", port), base)
	done()
	if err != nil || u.RC != 0 {
		res.Note = "failed: " + b.why("replicas-one", u.RC)
		return b.replicasSection(res), res, err
	}
	res.One, res.OneRSS = num(u.Wall), num(u.RSSMB)

	// Two copies: the second takes the next free port.
	var urls, queries []string
	for _, name := range []string{"fuseki-copy1", "fuseki-copy2"} {
		port, done, err := b.freshStore(ctx, "fuseki", name)
		defer done()
		if err != nil {
			res.Note = "not run: fuseki copy " + name + " did not start"
			return b.replicasSection(res), res, ctx.Err()
		}
		urls, queries = append(urls, storeURL("fuseki", port)), append(queries, queryURL("fuseki", port))
	}
	stores := strings.Join(urls, ",")
	u, err = load("replicas-two", stores, base)
	if err != nil || u.RC != 0 {
		res.Note = "failed: " + b.why("replicas-two", u.RC)
		return b.replicasSection(res), res, err
	}
	res.Two, res.TwoRSS = num(u.Wall), num(u.RSSMB)
	res.Ratio = num(u.Wall / float64(res.One))
	for i, q := range queries {
		n, err := b.sparqlCount(ctx, q, graphIRI)
		if err != nil {
			return "", nil, err
		}
		if i > 0 && n != float64(res.Triples) {
			res.Note = fmt.Sprintf("the copies hold %s and %s triples after the load", fmtInt(float64(res.Triples)), fmtInt(n))
		}
		res.Triples = num(n)
	}

	// The lag: each copy's record, polled while a --diff load runs.
	var lags []float64
	for r := range replicaRounds {
		input := changed
		if r%2 == 1 {
			input = base
		}
		before, err := b.loadRecord(ctx, queries[0])
		if err != nil {
			return "", nil, err
		}
		seen := make([]time.Time, len(queries))
		pctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for i, q := range queries {
			wg.Go(func() {
				for pctx.Err() == nil {
					if d, err := b.loadRecord(pctx, q); err == nil && d != before {
						seen[i] = time.Now()
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			})
		}
		tag := fmt.Sprintf("replicas-diff-%d", r+1)
		u, err := load(tag, stores, input)
		timer := time.AfterFunc(30*time.Second, stop)
		wg.Wait()
		timer.Stop()
		stop()
		if err != nil || u.RC != 0 {
			res.Note = "failed: " + b.why(tag, u.RC)
			return b.replicasSection(res), res, err
		}
		res.Diffs = append(res.Diffs, num(u.Wall))
		if seen[0].IsZero() || seen[1].IsZero() {
			res.Note = fmt.Sprintf("round %d: a copy never showed the load's record", r+1)
			return b.replicasSection(res), res, nil
		}
		lag := math.Abs(float64(seen[1].Sub(seen[0]).Milliseconds()))
		lags = append(lags, lag)
		res.LagMS = append(res.LagMS, num(lag))
	}
	slices.Sort(lags)
	res.P50, res.P95 = num(nearestRank(lags, 50)), num(nearestRank(lags, 95))
	return b.replicasSection(res), res, nil
}

// loadRecord is the digest kgrag recorded for graphIRI at the query
// endpoint q ("" for none): it changes in the commit of each --diff load.
func (b *bench) loadRecord(ctx context.Context, q string) (string, error) {
	body, err := b.sparqlCSV(ctx, q, fmt.Sprintf("SELECT ?d WHERE { GRAPH <urn:kgrag:loads> { <%s> <urn:kgrag:loadedDigest> ?d } }", graphIRI))
	if err != nil {
		return "", fmt.Errorf("load record at %s: %w", q, err)
	}
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(rows) < 2 {
		return "", err
	}
	return rows[1][0], nil
}

func (b *bench) replicasSection(r replicasResult) string {
	var sb strings.Builder
	sb.WriteString("## 17. Copies of a store: `kgrag load --store A,B`\n\n" +
		"The synthetic dataset loaded with `--diff` (a first load: the graph replaced whole, and recorded) into one fresh\n" +
		"Fuseki, then into two fresh Fusekis as copies of one store, which kgrag loads at once. Then the 1% change and\n" +
		"back, " + fmt.Sprint(replicaRounds) + " `--diff` loads into the copies, each copy's load record polled every 10 ms:\n" +
		"the lag is the time between the two copies showing the load. All on this machine: kgrag and both servers\n" +
		"share its cores.\n\n")
	if r.Note != "" {
		sb.WriteString("Note: " + r.Note + "\n\n")
	}
	sb.WriteString("| triples per copy | one Fuseki | two copies | two / one | --diff loads into the copies | lag p50 / p95 |\n|---|---|---|---|---|---|\n")
	diffs := make([]string, len(r.Diffs))
	for i, d := range r.Diffs {
		diffs[i] = f(float64(d), 1)
	}
	sb.WriteString(row(fmtInt(float64(r.Triples)),
		fmt.Sprintf("%s s (kgrag %s MB)", f(float64(r.One), 1), f(float64(r.OneRSS), 0)),
		fmt.Sprintf("%s s (kgrag %s MB)", f(float64(r.Two), 1), f(float64(r.TwoRSS), 0)),
		f(float64(r.Ratio), 2),
		strings.Join(diffs, ", ")+" s",
		fmt.Sprintf("%s / %s ms", f(float64(r.P50), 0), f(float64(r.P95), 0))))
	sb.WriteString("\n")
	return sb.String()
}
