package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/test"
)

// v2Mark ends every entity description of the changed graph.
const v2Mark = " [kgrag-edition-2]"

// serveProc is one kgrag serve process.
type serveProc struct {
	addr string
	cmd  *exec.Cmd
	out  *lockedBuffer
}

// startServeProc runs kgrag serve with args and --addr on a free port;
// the test kills it at the end.
func startServeProc(t *testing.T, args ...string) *serveProc {
	t.Helper()
	p := &serveProc{addr: freePort(t), out: &lockedBuffer{}}
	p.cmd = exec.Command(os.Args[0], append(append([]string{"serve"}, args...), "--addr", p.addr)...)
	p.cmd.Env = append(os.Environ(), "KGRAG_TEST_RUN_MAIN=1")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	return p
}

func (p *serveProc) version() uint64 {
	resp, err := http.Get("http://" + p.addr + "/readyz")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var r struct{ Version uint64 }
	_ = json.NewDecoder(resp.Body).Decode(&r)
	return r.Version
}

// pairReply is what the test reads of an /api/ask reply.
type pairReply struct {
	Answer       *string `json:"answer"`
	GraphVersion uint64  `json:"graph_version"`
	Context      struct {
		Text    string `json:"text"`
		Records struct {
			Entities []struct {
				ID string `json:"id"`
			} `json:"entities"`
		} `json:"records"`
	} `json:"context"`
}

// edition says which graph a reply's context comes from: 1, 2, or 0 when
// it mixes the two (or holds no entity). Each entity row of the second
// carries the mark once.
func (r pairReply) edition() int {
	n, marks := len(r.Context.Records.Entities), strings.Count(r.Context.Text, v2Mark)
	switch {
	case n > 0 && marks == 0:
		return 1
	case n > 0 && marks == n:
		return 2
	}
	return 0
}

func (p *serveProc) ask(ctx context.Context, q string) (pairReply, error) {
	body, _ := json.Marshal(map[string]any{"question": q, "mode": modeLocal})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.addr+"/api/ask", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return pairReply{}, err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return pairReply{}, fmt.Errorf("%s: %s", resp.Status, b.String())
	}
	var r pairReply
	if err := json.Unmarshal(b.Bytes(), &r); err != nil {
		return pairReply{}, err
	}
	return r, nil
}

// TestServePairOneStore runs two kgrag serve processes over one Oxigraph
// store and one Elasticsearch index. Both answer alike; 8 clients ask
// both without pause while kgrag load --diff changes every entity's
// description in the store, kgrag embed follows it in the index and
// SIGHUP reloads each server: no request fails, no answer mixes the two
// graphs, and afterwards both answer alike from the new graph.
func TestServePairOneStore(t *testing.T) {
	storeURL := test.Service(t, "OXIGRAPH")
	esURL := test.Service(t, "ELASTICSEARCH")
	f := newAskFixture(t)
	graph := fmt.Sprintf("http://example.org/kgrag-pair-test/%d", rand.Uint32())
	alias := fmt.Sprintf("kgrag-pair-test-%d", rand.Uint32())
	t.Cleanup(func() {
		deleteAlias(t, esURL, alias)
		if c, _, err := storeClient(storeOptions{url: storeURL, storeType: "oxigraph"}); err == nil {
			_ = c.Update(context.Background(), "DROP SILENT GRAPH <"+graph+">")
		}
	})
	load := func(input string) {
		t.Helper()
		if _, stderr, code := runKgrag(t, "load", "-q", "--diff", "--input", input, "--store", storeURL, "--store-type", "oxigraph", "--graph", graph); code != 0 {
			t.Fatalf("kgrag load --diff %s: exit %d: %s", input, code, stderr)
		}
	}
	embed := func(input string) {
		t.Helper()
		if _, stderr, code := runKgrag(t, "embed", "--input", input, "--index", t.TempDir(), "--index-url", esURL, "--index-name", alias,
			"--llm-url", f.srv.URL(), "--embed-model", askEmbedModel); code != 0 {
			t.Fatalf("kgrag embed %s: exit %d: %s", input, code, stderr)
		}
	}
	load(f.input)
	embed(f.input)

	var procs []*serveProc
	for range 2 {
		procs = append(procs, startServeProc(t, "--store", storeURL, "--store-type", "oxigraph", "--graph", graph,
			"--index-url", esURL, "--index-name", alias, "--llm-url", f.srv.URL(), "--embed-model", askEmbedModel,
			"--chat-model", "test-chat"))
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 60 s; outputs:\n%s\n%s", what, procs[0].out, procs[1].out)
			}
		}
	}
	waitFor("both servers ready", func() bool { return procs[0].version() == 1 && procs[1].version() == 1 })

	questions := askQuestions(t, f)
	same := func(edition int) {
		t.Helper()
		for _, q := range questions {
			a, errA := procs[0].ask(t.Context(), q)
			b, errB := procs[1].ask(t.Context(), q)
			if errA != nil || errB != nil {
				t.Fatalf("%.40q: %v, %v", q, errA, errB)
			}
			if d := cmp.Diff(a.Context, b.Context); d != "" || !cmp.Equal(a.Answer, b.Answer) {
				t.Errorf("%.40q: the two servers answer differently (-first +second):\n%s", q, d)
			}
			if a.edition() != edition {
				t.Errorf("%.40q: the answer comes from edition %d; want %d:\n%s", q, a.edition(), edition, a.Context.Text)
			}
		}
	}
	same(1)

	// The second edition: every entity description changed.
	ds, err := graphrag.Open(t.Context(), f.input)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ds.Entities {
		ds.Entities[i].Description += v2Mark
	}
	changed := filepath.Join(t.TempDir(), "output")
	if err := graphrag.Write3x(t.Context(), changed, ds); err != nil {
		t.Fatal(err)
	}

	var (
		mu       sync.Mutex
		failures []string
		mixed    []string
		editions = map[int]int{}
		requests int
	)
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				p, q := procs[(c+i)%2], questions[(c+i)%len(questions)]
				r, err := p.ask(ctx, q)
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				requests++
				switch {
				case err != nil:
					failures = append(failures, err.Error())
				case r.edition() == 0:
					mixed = append(mixed, fmt.Sprintf("%.40q on %s (version %d)", q, p.addr, r.GraphVersion))
				default:
					editions[r.edition()]++
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	t0 := time.Now()
	load(changed)
	loaded := time.Since(t0)
	embed(changed)
	for _, p := range procs {
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	// The question that first met the new load reloaded already; SIGHUP
	// reloads again, so each ends at version 2 or more.
	waitFor("both servers reloaded", func() bool { return procs[0].version() >= 2 && procs[1].version() >= 2 })
	time.Sleep(500 * time.Millisecond)
	stop()
	wg.Wait()
	t.Logf("%d requests from 8 clients over both servers during the update (load --diff %v, embed, SIGHUP): editions %v, %d failed, %d mixed",
		requests, loaded.Round(time.Millisecond), editions, len(failures), len(mixed))
	for i, p := range procs {
		t.Logf("server %d: %d questions met the new load in the store and were asked again after a reload", i+1,
			strings.Count(p.out.String(), "the graph changed in the store"))
	}
	if len(failures) > 0 {
		t.Errorf("%d requests failed during the update; first: %s", len(failures), failures[0])
	}
	if len(mixed) > 0 {
		t.Errorf("%d answers mix the two graphs; first: %s", len(mixed), mixed[0])
	}
	if editions[1] == 0 || editions[2] == 0 {
		t.Errorf("editions answered %v; want both, so that the update happened under load", editions)
	}
	same(2)
}
