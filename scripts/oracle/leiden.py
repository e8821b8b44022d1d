#!/usr/bin/env python3
"""leiden.py: the Python peers of kgrag's Leiden (internal/leiden) on one graph.

Usage: leiden.py [options] EDGES.jsonl     (run with the venv of scripts/leiden-py.sh)
       leiden.py --graphrag-prep RELS.jsonl...  (run with the venv of scripts/graphrag-py.sh)

EDGES.jsonl holds one edge per line as a JSON array [source, target, weight]
(node names are strings). The graph is built once, nodes numbered in order of
first appearance, parallel edges summed. Prints one JSON object:

  nodes, edges, self_loops
  graspologic.hierarchical  graspologic_native.hierarchical_leiden with
      GraphRAG 3.3.0's parameters (graphrag/graphs/hierarchical_leiden.py:
      resolution 1, randomness 0.001, iterations 1, use_modularity, the
      given max_cluster_size and seed), on the edges as given (kgrag's test
      hands it what GraphRAG's cluster_graph would): per level the
      modularity of the whole-graph partition at that level (each node in
      its community of that level, or its final one when that ends higher
      up), the number of communities, their largest size, and how many
      final communities have at least max_cluster_size nodes; the seconds
      of the call (best of --repeat); whether a second run with the same
      seed gave the same rows.
  graspologic.hierarchical_mean  with --mean-seeds N: hierarchical_leiden
      as above with seeds 0..N-1, and per level the mean modularity over
      those runs (a run with fewer levels counts its final partition at the
      levels below its last), for comparisons that a single seed's luck
      does not decide on small graphs.
  graspologic.leiden  graspologic_native.leiden (same parameters, trials 1):
      modularity, communities, seconds.
  leidenalg  leidenalg.find_partition(ModularityVertexPartition, weights,
      n_iterations=--leidenalg-iterations (default -1: until an iteration
      changes nothing), seed): modularity, communities, seconds (the call
      only; igraph's graph is built before).

With --memberships FILE (JSON lines, each an object node name -> community
number covering every node), "memberships" lists igraph's modularity of each.

--graphrag-prep reads relationships as [source, target, weight] rows (table
order), one file per graph, and prints for each file one line: the JSON list
of [source, target, weight] edges that GraphRAG's own cluster_graph
(_compute_leiden_communities, use_lcc=True) passes to hierarchical_leiden;
the call is intercepted, nothing is clustered.

Every modularity here is igraph's Graph.modularity(membership, weights,
resolution=1): Q = 1/(2m) sum_ij (A_ij - k_i k_j / 2m) delta(c_i, c_j), self
loops counted twice in A_ii and k_i, the definition kgrag's Modularity uses.
"""

import argparse
import json
import sys
import time



def read_edges(path):
    names, index, summed = [], {}, {}
    for line in open(path, encoding="utf-8"):
        if not line.strip():
            continue
        s, t, w = json.loads(line)
        for x in (s, t):
            if x not in index:
                index[x] = len(names)
                names.append(x)
        a, b = index[s], index[t]
        key = (a, b) if a <= b else (b, a)
        summed[key] = summed.get(key, 0.0) + float(w)
    return names, index, summed


def timed(repeat, fn):
    best, out = None, None
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        out = fn()
        took = time.perf_counter() - start
        best = took if best is None else min(best, took)
    return out, best


def level_memberships(rows, index, n):
    """Whole-graph memberships per level from HierarchicalCluster rows."""
    by_level = {}
    for r in rows:
        by_level.setdefault(r.level, []).append(r)
    members, cur = [], [-1] * n
    for level in sorted(by_level):
        for r in by_level[level]:
            cur[index[r.node]] = r.cluster
        members.append(list(cur))
    return members, by_level


def graphrag_prep(paths):
    import pandas as pd
    from graphrag.index.operations import cluster_graph

    captured = []

    def capture(edges, **_):
        captured.append([list(e) for e in edges])
        return []

    cluster_graph.hierarchical_leiden = capture
    for path in paths:
        rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
        df = pd.DataFrame(rows, columns=["source", "target", "weight"])
        cluster_graph._compute_leiden_communities(df, max_cluster_size=10, use_lcc=True, seed=0xDEADBEEF)
        json.dump(captured.pop(), sys.stdout)
        sys.stdout.write("\n")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--graphrag-prep":
        graphrag_prep(sys.argv[2:])
        return
    import graspologic_native as gn
    import igraph
    import leidenalg

    ap = argparse.ArgumentParser()
    ap.add_argument("edges")
    ap.add_argument("--max-cluster-size", type=int, default=10)
    ap.add_argument("--seed", type=lambda s: int(s, 0), default=0xDEADBEEF)
    ap.add_argument("--leidenalg-iterations", type=int, default=-1)
    ap.add_argument("--repeat", type=int, default=1, help="timed runs of each peer; the best is reported")
    ap.add_argument("--peers", default="hierarchical,leiden,leidenalg")
    ap.add_argument("--mean-seeds", type=int, default=0)
    ap.add_argument("--memberships", help="JSON lines of node -> community objects to score")
    args = ap.parse_args()
    peers = set(args.peers.split(","))

    names, index, summed = read_edges(args.edges)
    n = len(names)
    pairs = list(summed)
    weights = [summed[p] for p in pairs]
    g = igraph.Graph(n=n, edges=pairs, directed=False)
    g.es["weight"] = weights
    # graspologic takes names; the summed edges, in the file's first-seen order.
    gedges = [(names[a], names[b], w) for (a, b), w in zip(pairs, weights)]

    def modularity(membership):
        return g.modularity(membership, weights="weight", resolution=1.0)

    out = {"nodes": n, "edges": len(pairs), "self_loops": sum(1 for a, b in pairs if a == b)}
    if args.memberships:
        out["memberships"] = [
            modularity([m[x] for x in names])
            for m in map(json.loads, open(args.memberships, encoding="utf-8")) if m]
    grasp = {}
    if "hierarchical" in peers:
        run = lambda: gn.hierarchical_leiden(
            edges=gedges, starting_communities=None, resolution=1.0, randomness=0.001,
            iterations=1, use_modularity=True, max_cluster_size=args.max_cluster_size, seed=args.seed)
        rows, secs = timed(args.repeat, run)
        again = run()
        key = lambda r: (r.node, r.cluster, r.level, r.parent_cluster, r.is_final_cluster)
        members, by_level = level_memberships(rows, index, n)
        levels = []
        for level, m in enumerate(members):
            sizes = {}
            for r in by_level[level]:
                sizes[r.cluster] = sizes.get(r.cluster, 0) + 1
            final = {r.cluster for r in by_level[level] if r.is_final_cluster}
            levels.append({
                "level": level,
                "modularity": modularity(m),
                "communities": len(sizes),
                "max_size": max(sizes.values()),
                "final_at_least_max": sum(1 for c in final if sizes[c] >= args.max_cluster_size),
                "split_below_max": sum(1 for c, s in sizes.items() if c not in final and s < args.max_cluster_size),
            })
        grasp["hierarchical"] = {
            "levels": levels,
            "seconds": secs,
            "deterministic": sorted(map(key, rows)) == sorted(map(key, again)),
        }
    if args.mean_seeds > 0:
        per = []
        for seed in range(args.mean_seeds):
            rows = gn.hierarchical_leiden(
                edges=gedges, starting_communities=None, resolution=1.0, randomness=0.001,
                iterations=1, use_modularity=True, max_cluster_size=args.max_cluster_size, seed=seed)
            per.append([modularity(m) for m in level_memberships(rows, index, n)[0]])
        depth = max(map(len, per))
        grasp["hierarchical_mean"] = {
            "seeds": args.mean_seeds,
            "levels": [sum(q[min(level, len(q) - 1)] for q in per) / len(per) for level in range(depth)],
        }
    if "leiden" in peers:
        (q, parts), secs = timed(args.repeat, lambda: gn.leiden(
            edges=gedges, starting_communities=None, resolution=1.0, randomness=0.001,
            iterations=1, use_modularity=True, seed=args.seed, trials=1))
        m = [parts[x] for x in names]
        grasp["leiden"] = {"modularity": modularity(m), "reported_modularity": q,
                           "communities": len(set(m)), "seconds": secs}
    if grasp:
        out["graspologic"] = grasp
    if "leidenalg" in peers:
        part, secs = timed(args.repeat, lambda: leidenalg.find_partition(
            g, leidenalg.ModularityVertexPartition, weights="weight",
            n_iterations=args.leidenalg_iterations, seed=args.seed & 0x7FFFFFFF))
        out["leidenalg"] = {"modularity": modularity(part.membership), "communities": len(part),
                            "n_iterations": args.leidenalg_iterations, "seconds": secs}
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
