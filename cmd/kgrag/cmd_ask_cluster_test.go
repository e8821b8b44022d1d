package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// esCluster is the three-node cluster of scripts/es-cluster.sh: node N
// is named kgrag-N.
type esCluster struct{ *scriptNodes }

func newESCluster(t *testing.T) *esCluster {
	t.Helper()
	return &esCluster{newScriptNodes(t, "ES_CLUSTER", "es-cluster.sh", 3)}
}

// get decodes the JSON of a GET through node url.
func esGet(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// waitHealth waits until the alias's health, as the master sees it, is
// status, and returns how long it took.
func (c *esCluster) waitHealth(t *testing.T, alias, status string) time.Duration {
	t.Helper()
	t0 := time.Now()
	for time.Since(t0) < 3*time.Minute {
		resp, err := http.Get(c.live() + "/_cluster/health/" + alias + "?wait_for_status=" + status + "&timeout=5s")
		if err == nil {
			var h struct {
				Status   string `json:"status"`
				TimedOut bool   `json:"timed_out"`
			}
			err = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK && !h.TimedOut && h.Status == status {
				return time.Since(t0)
			}
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("the index %s did not turn %s in 3 minutes", alias, status)
	return 0
}

// copies lists, for each copy of the index's shard, its node number and
// whether it is the primary.
func (c *esCluster) copies(t *testing.T, alias string) map[int]bool {
	t.Helper()
	var rows []struct {
		Prirep string `json:"prirep"`
		State  string `json:"state"`
		Node   string `json:"node"`
	}
	esGet(t, c.live()+"/_cat/shards/"+alias+"?format=json", &rows)
	out := map[int]bool{}
	for _, r := range rows {
		if r.State != "STARTED" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(r.Node, "kgrag-"))
		if err != nil {
			t.Fatalf("shard copy on node %q, not kgrag-N", r.Node)
		}
		out[n] = r.Prirep == "p"
	}
	return out
}

// storedVector reads the vector of entity id from the copy of the index
// on node n, not from whichever copy the cluster picks.
func (c *esCluster) storedVector(t *testing.T, n int, alias, id string) []float32 {
	t.Helper()
	var doc struct {
		Found  bool `json:"found"`
		Source struct {
			Vector []float32 `json:"vector"`
		} `json:"_source"`
	}
	esGet(t, c.urls[n-1]+"/"+alias+"/_doc/"+id+"?preference=_only_local&realtime=false", &doc)
	if !doc.Found {
		t.Fatalf("node %d's copy of %s holds no document %s", n, alias, id)
	}
	return doc.Source.Vector
}

// TestAskElasticsearchCluster runs the vector index on a real three-node
// Elasticsearch cluster (scripts/es-cluster.sh) with one replica and
// takes nodes away as crashes would: one node lost changes no answer and
// turns kgrag doctor's line to warn, an embed while it is down reaches its
// copy when it comes back, and two nodes lost stop ask with exit 10 and
// the cluster's state, and embed without writing anything.
func TestAskElasticsearchCluster(t *testing.T) {
	c := newESCluster(t)
	f := newAskFixture(t)
	alias := fmt.Sprintf("kgrag-cluster-test-%d", rand.Uint32())
	t.Cleanup(func() { deleteAlias(t, c.live(), alias) })

	embed := func(input string, index string) (string, int) {
		t.Helper()
		_, stderr, code := runKgrag(t, "embed", "--input", input, "--index", index,
			"--index-url", c.all(), "--index-name", alias, "--index-replicas", "1",
			"--llm-url", f.srv.URL(), "--embed-model", askEmbedModel)
		return stderr, code
	}
	if stderr, code := embed(f.input, t.TempDir()); code != 0 {
		t.Fatalf("kgrag embed onto the cluster: exit %d: %s", code, stderr)
	}
	c.waitHealth(t, alias, "green")
	copies := c.copies(t, alias)
	if len(copies) != 2 {
		t.Fatalf("index %s has copies on nodes %v; want a primary and a replica", alias, copies)
	}

	ask := func(q string) (askResult, string, int) {
		t.Helper()
		stdout, stderr, code := runKgrag(t, "ask", "--input", f.input, "--index-url", c.all(), "--index-name", alias,
			"--llm-url", f.srv.URL(), "--embed-model", askEmbedModel, "--chat-model", "test-chat", "--json", q)
		if code != 0 {
			return askResult{}, stderr, code
		}
		return decodeAsk(t, []byte(stdout)), stderr, code
	}
	questions := askQuestions(t, f)
	before := map[string]askResult{}
	for _, q := range questions {
		flatRun := askContext(t, f.options(q))
		r, stderr, code := ask(q)
		if code != 0 {
			t.Fatalf("ask %.40q on the cluster: exit %d: %s", q, code, stderr)
		}
		if d := cmp.Diff(flatRun.Context.Records, r.Context.Records); d != "" {
			t.Errorf("%.40q: the cluster's records differ from the flat index's (-flat +cluster):\n%s", q, d)
		}
		before[q] = r
	}

	// One node lost: the one holding the primary, so the replica must
	// take over.
	var primary int
	for n, p := range copies {
		if p {
			primary = n
		}
	}
	c.kill(t, primary)
	took := c.waitHealth(t, alias, "yellow")
	t.Logf("node %d (primary) killed: yellow after %v", primary, took.Round(time.Millisecond))
	for _, q := range questions {
		r, stderr, code := ask(q)
		if code != 0 {
			t.Fatalf("ask %.40q with node %d down: exit %d: %s", q, primary, code, stderr)
		}
		if d := cmp.Diff(before[q].Context.Records, r.Context.Records); d != "" {
			t.Errorf("%.40q: records changed with node %d down (-before +after):\n%s", q, primary, d)
		}
		if !cmp.Equal(r.Answer, before[q].Answer) || r.Answer == nil {
			t.Errorf("%.40q: answer %v with node %d down; was %v", q, r.Answer, primary, before[q].Answer)
		}
	}
	stdout, stderr, code := runKgrag(t, "doctor", "--input", f.input, "--index-url", c.all(), "--index-name", alias,
		"--llm-url", f.srv.URL(), "--embed-model", askEmbedModel, "--chat-model", "test-chat", "--json")
	var report doctorReport
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("doctor --json: exit %d, %v: %s %s", code, err, stdout, stderr)
	}
	i := slices.IndexFunc(report.Checks, func(r checkResult) bool { return r.Name == "index" })
	if i < 0 || report.Checks[i].Status != checkWarn || !strings.Contains(report.Checks[i].Detail, "cluster health yellow: 2 nodes") ||
		!strings.Contains(report.Checks[i].Detail, "1 of 2 shard copies unassigned") || report.Checks[i].Fix == "" {
		t.Errorf("doctor with node %d down: %+v; want the index warn, yellow, 2 nodes, 1 of 2 copies unassigned, and a hint", primary, report.Checks)
	}
	if code != 0 {
		t.Errorf("doctor with a yellow cluster: exit %d; want 0 (warn is no failure)", code)
	}

	// An embed while the node is down, of a copy with changed
	// descriptions: written in place to the copy that is up, and to the
	// node's copy when it comes back.
	ds, err := graphrag.Open(t.Context(), f.input)
	if err != nil {
		t.Fatal(err)
	}
	changed := map[string][]float32{}
	for i := range ds.Entities[:5] {
		ds.Entities[i].Description += " Seen again on a cold morning."
		changed[ds.Entities[i].ID] = llmtest.Embed(askEmbedModel, embedtext.Entity(ds.Entities[i]), askDim)
	}
	changedDir := filepath.Join(t.TempDir(), "output")
	if err := graphrag.Write3x(t.Context(), changedDir, ds); err != nil {
		t.Fatal(err)
	}
	if stderr, code := embed(changedDir, t.TempDir()); code != 0 {
		t.Fatalf("kgrag embed with node %d down: exit %d: %s", primary, code, stderr)
	} else if !strings.Contains(stderr, "updated in place: 5 written") {
		t.Errorf("embed of 5 changed descriptions: %q; want an update in place of 5", stderr)
	}
	c.restart(t, primary)
	took = c.waitHealth(t, alias, "green")
	t.Logf("node %d back: green after %v", primary, took.Round(time.Millisecond))
	copies = c.copies(t, alias)
	if len(copies) != 2 {
		t.Fatalf("after the restart the index has copies on nodes %v; want two", copies)
	}
	for n := range copies {
		for id, want := range changed {
			got := c.storedVector(t, n, alias, id)
			if !vectorsClose(got, want) {
				t.Errorf("node %d's copy holds an old vector for entity %s", n, id)
			}
		}
	}

	// Two nodes lost: no quorum, so no master. ask and embed refuse with
	// the cluster's state and exit 10, and embed leaves the index as it
	// was.
	var targets map[string]any
	esGet(t, c.live()+"/_alias/"+alias, &targets)
	c.kill(t, 1)
	c.kill(t, 2)
	t0 := time.Now()
	_, stderr, code = ask(questions[0])
	t.Logf("ask with two nodes down failed in %v", time.Since(t0).Round(time.Millisecond))
	if code != exitStoreDown || !strings.Contains(stderr, "cannot serve the index") || !strings.Contains(stderr, "no elected master") ||
		strings.Contains(stderr, "--index-url") {
		t.Errorf("ask with two of three nodes down: exit %d, %q; want exit %d naming the cluster's state", code, stderr, exitStoreDown)
	}
	t.Logf("ask with two nodes down: %s", strings.TrimSpace(stderr))
	t0 = time.Now()
	stderr, code = embed(f.input, t.TempDir())
	t.Logf("embed with two nodes down failed in %v: %s", time.Since(t0).Round(time.Millisecond), strings.TrimSpace(stderr))
	if code != exitStoreDown || !strings.Contains(stderr, "no elected master") {
		t.Errorf("embed with two of three nodes down: exit %d, %q; want exit %d naming the cluster's state", code, stderr, exitStoreDown)
	}
	c.restart(t, 1)
	c.restart(t, 2)
	c.waitHealth(t, alias, "green")
	var after map[string]any
	esGet(t, c.live()+"/_alias/"+alias, &after)
	if !cmp.Equal(targets, after) {
		t.Errorf("the alias points at %v after the refused embed; was %v", after, targets)
	}
	for n := range c.copies(t, alias) {
		for id, want := range changed {
			if got := c.storedVector(t, n, alias, id); !vectorsClose(got, want) {
				t.Errorf("after the refused embed node %d's copy holds another vector for %s", n, id)
			}
		}
	}
	r, stderr, code := ask(questions[0])
	if code != 0 {
		t.Errorf("ask with every node back: exit %d: %s", code, stderr)
	} else if len(r.Context.Records.Entities) == 0 {
		t.Errorf("ask with every node back: no entities")
	}
}

// vectorsClose compares a stored vector with the one embedded: equal up
// to float32 rounding through JSON.
func vectorsClose(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := a[i] - b[i]; d > 1e-6 || d < -1e-6 {
			return false
		}
	}
	return true
}
