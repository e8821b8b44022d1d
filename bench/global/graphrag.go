package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// oracleJob is one line of scripts/oracle/graphrag_global.py --jobs.
type oracleJob struct {
	Dir    string `json:"dir"`
	Level  int64  `json:"community_level"`
	Budget int    `json:"max_context_tokens"`
}

// oracleOut is the part of the oracle's answer the benchmark reads.
type oracleOut struct {
	Batches []struct {
		IDs []string `json:"ids"`
	} `json:"batches"`
	Reports int `json:"reports"`
	// Seconds is build_context alone; AdaptSeconds the indexer adapters
	// and the context builder's construction, after the parquet reads.
	Seconds      float64 `json:"seconds"`
	AdaptSeconds float64 `json:"adapt_seconds"`
}

// runOracle runs GraphRAG's global context builder repeat times on dir in
// one interpreter (importing GraphRAG takes seconds) and returns its
// answers. An error carries the last line the script wrote to stderr.
func runOracle(ctx context.Context, py, repo, dir string, level int64, budget, repeat int) ([]oracleOut, error) {
	var in bytes.Buffer
	for range repeat {
		b, err := json.Marshal(oracleJob{Dir: dir, Level: level, Budget: budget})
		if err != nil {
			return nil, err
		}
		in.Write(append(b, '\n'))
	}
	cmd := exec.CommandContext(ctx, py, filepath.Join(repo, "scripts", "oracle", "graphrag_global.py"), "--jobs")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("graphrag_global.py on %s: %w: %s", dir, err, lastLine(stderr.String()))
	}
	// One JSON object per line: a stream of values to the decoder.
	var res []oracleOut
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var o oracleOut
		if err := dec.Decode(&o); err != nil {
			return nil, fmt.Errorf("graphrag_global.py on %s: output: %w", dir, err)
		}
		res = append(res, o)
	}
	if len(res) != repeat {
		return nil, fmt.Errorf("graphrag_global.py on %s: %d answers to %d jobs: %s", dir, len(res), repeat, lastLine(stderr.String()))
	}
	return res, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "..."
	}
	return l
}
