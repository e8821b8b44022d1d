// Command leiden times kgrag's Leiden (package leiden) on one graph,
// for the leiden step of bench/run, and writes the graph's edges so that
// the Python peers (scripts/oracle/leiden.py) run on the same graph.
//
// Usage:
//
//	kgrag-leiden -graphrag DIR  -edges-out FILE [-repeat N]   a GraphRAG output's relationship graph, as GraphRAG's cluster_graph builds it
//	kgrag-leiden -planted       -edges-out FILE [-repeat N]   the 100k-node planted-partition graph of the tests
//
// It prints one JSON object: nodes, edges, and for Hierarchical (GraphRAG's
// parameters, seed 0xDEADBEEF) and Leiden (defaults, same seed) the best
// wall time of -repeat runs in seconds, with the modularity per level (of
// the whole-graph partition at each level) and the communities of each
// level, or the modularity and communities of the partition.
//
// EXIT STATUS: 0 on success, 1 on any error, 2 on bad usage.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/leiden"
	"github.com/kgrag/kgrag/internal/leiden/leidentest"
)

const seed = 0xDEADBEEF

type level struct {
	Modularity  float64 `json:"modularity"`
	Communities int     `json:"communities"`
}

type report struct {
	Nodes        int `json:"nodes"`
	Edges        int `json:"edges"`
	Hierarchical struct {
		Seconds float64 `json:"seconds"`
		Levels  []level `json:"levels"`
	} `json:"hierarchical"`
	Leiden struct {
		Seconds float64 `json:"seconds"`
		level
	} `json:"leiden"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir := flag.String("graphrag", "", "GraphRAG output directory whose relationships make the graph")
	planted := flag.Bool("planted", false, "use the 100k-node planted-partition graph of the tests")
	out := flag.String("edges-out", "", "write the graph's edges here as JSON lines [source, target, weight]")
	repeat := flag.Int("repeat", 3, "timed runs of each; the best is reported")
	flag.Parse()
	if (*dir == "") == !*planted || *repeat < 1 {
		fmt.Fprintln(os.Stderr, "kgrag-leiden: give exactly one of -graphrag DIR and -planted, and -repeat >= 1")
		os.Exit(2)
	}
	if err := run(ctx, *dir, *out, *repeat); err != nil {
		fmt.Fprintln(os.Stderr, "kgrag-leiden:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir, out string, repeat int) error {
	g, err := load(ctx, dir)
	if err != nil {
		return err
	}
	edges := g.Edges()
	if out != "" {
		if err := writeEdges(out, edges); err != nil {
			return err
		}
	}
	var r report
	r.Nodes, r.Edges = g.N(), len(edges)
	var h *leiden.Hierarchy
	r.Hierarchical.Seconds, err = best(repeat, func() (err error) {
		h, err = leiden.Hierarchical(ctx, g, leiden.HierOptions{Seed: seed})
		return err
	})
	if err != nil {
		return err
	}
	for l := range h.Levels {
		r.Hierarchical.Levels = append(r.Hierarchical.Levels, level{Modularity: leiden.Modularity(g, h.Membership(l), 1)})
	}
	for _, c := range h.Communities {
		r.Hierarchical.Levels[c.Level].Communities++
	}
	var p leiden.Partition
	r.Leiden.Seconds, err = best(repeat, func() (err error) {
		p, err = leiden.Leiden(ctx, g, leiden.Options{Seed: seed})
		return err
	})
	if err != nil {
		return err
	}
	r.Leiden.level = level{leiden.Modularity(g, p, 1), p.Count()}
	return json.NewEncoder(os.Stdout).Encode(r)
}

func load(ctx context.Context, dir string) (*leiden.Graph, error) {
	if dir == "" {
		g, _, err := leidentest.Planted(leidentest.Benchmark100k)
		return g, err
	}
	ds, err := graphrag.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	return leiden.NewGraph(leiden.GraphRAGEdges(leidentest.RelationshipEdges(ds), true))
}

func writeEdges(path string, edges []leiden.Edge) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write edges: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	enc := json.NewEncoder(f)
	for _, e := range edges {
		if err := enc.Encode([3]any{e.Source, e.Target, e.Weight}); err != nil {
			return fmt.Errorf("write edges %s: %w", path, err)
		}
	}
	return nil
}

// best returns the shortest wall time of n runs of fn.
func best(n int, fn func() error) (float64, error) {
	b := 0.0
	for i := range n {
		start := time.Now()
		if err := fn(); err != nil {
			return 0, err
		}
		if s := time.Since(start).Seconds(); i == 0 || s < b {
			b = s
		}
	}
	return b, nil
}
