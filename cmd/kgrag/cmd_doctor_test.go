package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/embedindex/elastic"
	"github.com/kgrag/kgrag/embedindex/flat"
	"github.com/kgrag/kgrag/embedindex/location"
	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
	"github.com/kgrag/kgrag/loader"
	"github.com/kgrag/kgrag/ontology"
	"github.com/kgrag/kgrag/sparqlq"
)

const doctorModel = "nomic-embed-text"

// doctorIndex writes a flat index of n vectors of dim from model in a new
// folder, as kgrag embed would, and returns the folder.
func doctorIndex(t *testing.T, model string, dim, n int) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, entityIndexFile)
	if n == 0 {
		b, err := flat.Create(path, model, dim)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	ids := make([]string, n)
	vecs := make([][]float32, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("e%d", i)
		vecs[i] = llmtest.Embed(model, fmt.Sprintf("ENTITY %d: a test entity", i), dim)
	}
	if err := flat.Write(t.Context(), path, model, ids, vecs); err != nil {
		t.Fatal(err)
	}
	return dir
}

// doctorDefaults are the options the flags give by default, with the model
// server at url and no retries.
func doctorDefaults(url string) doctorOptions {
	return doctorOptions{
		llm:       llmOptions{url: url, embedModel: doctorModel, timeout: 5 * time.Second},
		chatModel: defaultChatModel,
		index:     indexOptions{name: defaultESIndex},
	}
}

// wantCheck is what a test expects of one check.
type wantCheck struct {
	status string
	detail []string // substrings of Detail
	fix    []string // substrings of Fix
}

func checkResultIs(t *testing.T, r checkResult, w wantCheck) {
	t.Helper()
	if r.Status != w.status {
		t.Errorf("%s: status %s (%s; fix %q); want %s", r.Name, r.Status, r.Detail, r.Fix, w.status)
	}
	for _, s := range w.detail {
		if !strings.Contains(r.Detail, s) {
			t.Errorf("%s: detail %q lacks %q", r.Name, r.Detail, s)
		}
	}
	for _, s := range w.fix {
		if !strings.Contains(r.Fix, s) {
			t.Errorf("%s: fix %q lacks %q", r.Name, r.Fix, s)
		}
	}
}

func findCheck(t *testing.T, results []checkResult, name string) checkResult {
	t.Helper()
	for _, r := range results {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no %s check in %+v", name, results)
	return checkResult{}
}

// TestDoctorModels checks the embedder and chat checks against the test
// model server.
func TestDoctorModels(t *testing.T) {
	const dim = 16
	index16 := doctorIndex(t, doctorModel, dim, 5)
	indexOther := doctorIndex(t, "mxbai-embed-large", dim, 5)
	tests := []struct {
		name   string
		server llmtest.Config
		down   bool // the model server's URL answers nothing
		fail   *llmtest.Failure
		edit   func(*doctorOptions)
		emb    wantCheck
		chat   wantCheck
		chats  int // chat requests the server must have had
	}{
		{name: "ok", server: llmtest.Config{Dim: dim, Models: []string{doctorModel, defaultChatModel}},
			emb:  wantCheck{checkOK, []string{doctorModel, "dimension 16, as the index"}, nil},
			chat: wantCheck{checkOK, []string{defaultChatModel, "is served"}, nil}},
		{name: "unreachable", down: true,
			emb:  wantCheck{checkFailed, []string{"127.0.0.1:1"}, []string{"--llm-url", "KGRAG_LLM_URL", "config key llm-url"}},
			chat: wantCheck{checkFailed, []string{"see embedder"}, nil}},
		{name: "embedding model not served", server: llmtest.Config{Dim: dim, Models: []string{defaultChatModel}},
			emb:  wantCheck{checkFailed, []string{"does not serve embedding model " + doctorModel, "it lists: " + defaultChatModel}, []string{"ollama pull " + doctorModel, "--embed-model", "KGRAG_EMBED_MODEL", "config key embed-model"}},
			chat: wantCheck{checkOK, nil, nil}},
		{name: "chat model not served", server: llmtest.Config{Dim: dim, Models: []string{doctorModel}},
			emb:  wantCheck{checkOK, nil, nil},
			chat: wantCheck{checkFailed, []string{"does not serve chat model " + defaultChatModel}, []string{"--chat-model", "KGRAG_CHAT_MODEL", "config key chat-model"}}},
		{name: "ollama's :latest", server: llmtest.Config{Dim: dim, Models: []string{doctorModel, defaultChatModel + ":latest"}},
			emb: wantCheck{checkOK, nil, nil}, chat: wantCheck{checkOK, nil, nil}},
		{name: "wrong dimension", server: llmtest.Config{Dim: 32},
			emb:  wantCheck{checkFailed, []string{"dimension 32", "index holds dimension 16"}, []string{"rebuild the index with kgrag embed", "--embed-model", "--llm-url"}},
			chat: wantCheck{checkOK, nil, nil}},
		{name: "index of another model", server: llmtest.Config{Dim: dim},
			edit: func(o *doctorOptions) { o.index.path = indexOther },
			emb:  wantCheck{checkFailed, []string{"built with mxbai-embed-large, not " + doctorModel}, []string{"--embed-model (env KGRAG_EMBED_MODEL, config key embed-model) to mxbai-embed-large"}},
			chat: wantCheck{checkOK, nil, nil}},
		{name: "no index to compare with", server: llmtest.Config{Dim: dim},
			edit: func(o *doctorOptions) { o.index.path = "" },
			emb:  wantCheck{checkOK, []string{"dimension 16 (no index to compare with)"}, nil},
			chat: wantCheck{checkOK, nil, nil}},
		{name: "no chat model", server: llmtest.Config{Dim: dim},
			edit: func(o *doctorOptions) { o.chatModel = "" },
			emb:  wantCheck{checkOK, nil, nil},
			chat: wantCheck{checkSkipped, []string{"no chat model"}, []string{"--chat-model"}}},
		{name: "try chat", server: llmtest.Config{Dim: dim},
			edit:  func(o *doctorOptions) { o.tryChat = true },
			emb:   wantCheck{checkOK, nil, nil},
			chat:  wantCheck{checkOK, []string{"answered a one-token chat", "JSON replies: response_format json_schema"}, nil},
			chats: 2},
		{name: "try chat, json_object only", server: llmtest.Config{Dim: dim, ResponseFormats: []string{"json_object", "text"}},
			edit:  func(o *doctorOptions) { o.tryChat = true },
			emb:   wantCheck{checkOK, nil, nil},
			chat:  wantCheck{checkOK, []string{"JSON replies: response_format json_object"}, nil},
			chats: 3},
		{name: "try chat, no response_format", server: llmtest.Config{Dim: dim, ResponseFormats: []string{"text"}},
			edit:  func(o *doctorOptions) { o.tryChat = true },
			emb:   wantCheck{checkOK, nil, nil},
			chat:  wantCheck{checkOK, []string{"JSON replies: asked for in the prompt only"}, nil},
			chats: 4},
		{name: "try chat refused", server: llmtest.Config{Dim: dim},
			fail:  &llmtest.Failure{Path: "/chat/completions", Status: http.StatusBadRequest, Message: "context too long"},
			edit:  func(o *doctorOptions) { o.tryChat = true },
			emb:   wantCheck{checkOK, nil, nil},
			chat:  wantCheck{checkFailed, []string{"context too long"}, []string{"--chat-model"}},
			chats: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := "http://127.0.0.1:1/v1"
			var srv *llmtest.Server
			if !tt.down {
				srv = llmtest.Start(t, tt.server)
				url = srv.URL()
				if tt.fail != nil {
					srv.Fail(*tt.fail)
				}
			}
			opts := doctorDefaults(url)
			opts.index.path = index16
			if tt.edit != nil {
				tt.edit(&opts)
			}
			results := runChecks(t.Context(), opts)
			checkResultIs(t, findCheck(t, results, "embedder"), tt.emb)
			checkResultIs(t, findCheck(t, results, "chat"), tt.chat)
			if srv == nil {
				return
			}
			if n := srv.Count("/chat/completions"); n != tt.chats {
				t.Errorf("%d chat requests; want %d", n, tt.chats)
			}
			// The one-token chat, then the JSON probe: short, whichever
			// response_format it was asked in.
			for _, r := range srv.Requests() {
				if !strings.HasSuffix(r.Path, "/chat/completions") {
					continue
				}
				want := 1.0
				if _, json := r.Extra["response_format"]; json || strings.Contains(r.Messages[0].Content, "JSON") {
					want = 16
				}
				if mt, _ := r.Extra["max_tokens"].(float64); mt != want {
					t.Errorf("a test chat asked for max_tokens %v; want %v", r.Extra["max_tokens"], want)
				}
			}
		})
	}
}

// damagedBigIndex writes a flat index of over 64 MiB of vectors, which
// Open leaves unchecked, with one vector byte flipped, and returns its
// folder: only doctor's full check finds the damage.
func damagedBigIndex(t *testing.T) string {
	t.Helper()
	const n, dim = 22_000, 768
	dir := t.TempDir()
	path := filepath.Join(dir, entityIndexFile)
	b, err := flat.CreateWith(path, doctorModel, dim, flat.BuildOptions{ANN: flat.ANNOff})
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, dim)
	for i := range n {
		v[i%dim], v[(i*7+1)%dim] = 1, 0.5
		if err := b.Add(fmt.Sprintf("e%d", i), v); err != nil {
			t.Fatal(err)
		}
		v[i%dim], v[(i*7+1)%dim] = 0, 0
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte{0x7f}, 4096); err != nil { // inside the vectors, which start at byte 128
		t.Fatal(err)
	}
	if x, err := flat.Open(t.Context(), path, flat.Options{}); err != nil {
		t.Fatalf("the damaged big index does not open: %v; want only Verify to find it", err)
	} else {
		x.Close()
	}
	return dir
}

// TestDoctorIndex checks the flat index check on files built here, and an
// Elasticsearch URL that answers nothing.
func TestDoctorIndex(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: 16})
	good := doctorIndex(t, doctorModel, 16, 7)
	input := t.TempDir() // a GraphRAG output folder with kgrag embed's index inside
	if err := os.CopyFS(filepath.Join(input, defaultIndexDir), os.DirFS(good)); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(t.TempDir(), entityIndexFile)
	if err := os.WriteFile(corrupt, []byte("not an index at all, but long enough to have a header"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*doctorOptions)
		want wantCheck
	}{
		{"not configured", func(o *doctorOptions) {}, wantCheck{checkSkipped, []string{"no vector index"}, []string{"--index", "--input", "--index-url"}}},
		{"folder", func(o *doctorOptions) { o.index.path = good },
			wantCheck{checkOK, []string{filepath.Join(good, entityIndexFile), "7 vectors of " + doctorModel + ", dimension 16"}, nil}},
		{"file", func(o *doctorOptions) { o.index.path = filepath.Join(good, entityIndexFile) }, wantCheck{checkOK, []string{"7 vectors"}, nil}},
		{"default inside --input", func(o *doctorOptions) { o.input = input },
			wantCheck{checkOK, []string{filepath.Join(input, defaultIndexDir, entityIndexFile), "7 vectors"}, nil}},
		{"missing", func(o *doctorOptions) { o.index.path = filepath.Join(t.TempDir(), "none") },
			wantCheck{checkFailed, []string{"no vector index at"}, []string{"kgrag embed --input DIR", "--index (env KGRAG_INDEX, config key index)"}}},
		{"--input without an index", func(o *doctorOptions) { o.input = t.TempDir() },
			wantCheck{checkFailed, []string{"no vector index at", defaultIndexDir}, []string{"kgrag embed"}}},
		{"corrupt", func(o *doctorOptions) { o.index.path = corrupt }, wantCheck{checkFailed, []string{corrupt}, []string{"rebuild it with kgrag embed"}}},
		{"empty", func(o *doctorOptions) { o.index.path = doctorIndex(t, doctorModel, 16, 0) }, wantCheck{checkFailed, []string{"is empty"}, []string{"kgrag embed"}}},
		{"damaged vectors of a big index", func(o *doctorOptions) { o.index.path = damagedBigIndex(t) },
			wantCheck{checkFailed, []string{entityIndexFile, "vectors: checksum mismatch"}, []string{"rebuild it with kgrag embed"}}},
		{"elasticsearch down", func(o *doctorOptions) { o.index.url = "http://127.0.0.1:1" },
			wantCheck{checkFailed, []string{"127.0.0.1:1"}, []string{"--index-url (env KGRAG_INDEX_URL, config key index-url)"}}},
		{"both kinds", func(o *doctorOptions) { o.index.url, o.index.path = "http://127.0.0.1:1", good },
			wantCheck{checkFailed, []string{"not both"}, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := doctorDefaults(srv.URL())
			tt.edit(&opts)
			checkResultIs(t, findCheck(t, runChecks(t.Context(), opts), "index"), tt.want)
		})
	}
}

// TestDoctorElasticsearch checks an alias built on a real node, and one
// that is not there.
func TestDoctorElasticsearch(t *testing.T) {
	url := test.Service(t, "ELASTICSEARCH")
	srv := llmtest.Start(t, llmtest.Config{Dim: 16})
	alias := "kgrag-doctor-" + randomSuffix(t)
	ids := []string{"a", "b", "c"}
	vecs := [][]float32{llmtest.Embed(doctorModel, "A", 16), llmtest.Embed(doctorModel, "B", 16), llmtest.Embed(doctorModel, "C", 16)}
	if err := elastic.Build(t.Context(), elastic.Config{URL: url, Index: alias}, doctorModel, 0, ids, vecs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteESIndex(t, url, alias) })
	tests := []struct {
		name, alias string
		want        wantCheck
		emb         wantCheck
	}{
		{"present", alias, wantCheck{checkOK, []string{alias, "3 vectors of " + doctorModel + ", dimension 16"}, nil}, wantCheck{checkOK, []string{"as the index"}, nil}},
		{"missing", alias + "-missing", wantCheck{checkFailed, []string{alias + "-missing"}, []string{"--index-name (env KGRAG_INDEX_NAME, config key index-name)"}}, wantCheck{checkOK, []string{"no index to compare with"}, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := doctorDefaults(srv.URL())
			opts.index.url, opts.index.name = url, tt.alias
			results := runChecks(t.Context(), opts)
			checkResultIs(t, findCheck(t, results, "index"), tt.want)
			checkResultIs(t, findCheck(t, results, "embedder"), tt.emb)
		})
	}
}

// deleteESIndex deletes the concrete indexes behind alias.
func deleteESIndex(t *testing.T, url, alias string) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodDelete, url+"/"+alias+"-*", nil)
	if err != nil {
		t.Error(err)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
}

func randomSuffix(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestDoctorStore checks the store check against a real Oxigraph (an
// empty graph, one without entities, one with three), a port with nothing
// behind it, and servers that refuse credentials or have no endpoint.
func TestDoctorStore(t *testing.T) {
	oxigraph := test.Service(t, "OXIGRAPH")
	base := "http://kgrag.test/doctor/" + randomSuffix(t)
	loaded, noEntities, empty := base+"/loaded", base+"/no-entities", base+"/empty"
	c, err := sparqlq.New(sparqlq.Config{QueryURL: oxigraph + "/query", UpdateURL: oxigraph + "/update"})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Update(t.Context(), fmt.Sprintf(`PREFIX gr: <%s>
INSERT DATA {
  GRAPH <%s> { <urn:e1> a gr:Entity . <urn:e2> a gr:Entity . <urn:e3> a gr:Entity . <urn:c1> a gr:Chunk . }
  GRAPH <%s> { <urn:c1> a gr:Chunk ; gr:text "no entities here" . }
}`, ontology.NS, loaded, noEntities))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, g := range []string{loaded, noEntities} {
			if err := c.Update(context.Background(), "DROP SILENT GRAPH <"+g+">"); err != nil {
				t.Error(err)
			}
		}
	})
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="kgrag"`)
		http.Error(w, "who are you?", http.StatusUnauthorized)
	}))
	t.Cleanup(refuse.Close)
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)

	store := func(url, kind, graph string) storeOptions {
		return storeOptions{url: url, storeType: kind, graph: graph, authScheme: "basic", timeout: 10 * time.Second, batchSize: loader.DefaultBatchSize, retries: -1}
	}
	tests := []struct {
		name  string
		input string
		store storeOptions
		want  wantCheck
	}{
		{"not configured", "", storeOptions{}, wantCheck{checkSkipped, []string{"no store"}, []string{"--store (env KGRAG_STORE, config key store)", "--graph", "--input"}}},
		{"--input instead", "./output", storeOptions{}, wantCheck{checkSkipped, []string{"reads --input ./output in memory"}, nil}},
		{"loaded graph", "", store(oxigraph, "oxigraph", loaded), wantCheck{checkOK, []string{"oxigraph store at " + oxigraph, "<" + loaded + "> holds 3 entities"}, nil}},
		{"graph without entities", "", store(oxigraph, "oxigraph", noEntities),
			wantCheck{checkFailed, []string{"<" + noEntities + "> holds no gr:Entity"}, []string{"--graph (env KGRAG_GRAPH, config key graph)", "kgrag load --input DIR --store " + oxigraph, "graphs there with entities"}}},
		{"empty graph", "", store(oxigraph, "oxigraph", empty), wantCheck{checkFailed, []string{"holds no gr:Entity"}, nil}},
		{"store type guessed", "", store(oxigraph, "", loaded), wantCheck{checkOK, []string{"oxigraph store", "holds 3 entities"}, nil}},
		{"no --graph", "", store(oxigraph, "oxigraph", ""), wantCheck{checkFailed, []string{"--store needs --graph"}, []string{"--graph"}}},
		{"unreachable", "", store("http://127.0.0.1:1", "oxigraph", loaded), wantCheck{checkFailed, []string{"no answer at http://127.0.0.1:1/query"}, []string{"start the store", "--store (env KGRAG_STORE, config key store)"}}},
		{"credentials refused", "", store(refuse.URL, "generic-update", loaded),
			wantCheck{checkFailed, []string{"refused the credentials", "401"}, []string{"--user", "--password (env KGRAG_STORE_PASSWORD or KGRAG_STORE_PASSWORD_FILE, config key password or password-file)", "--token"}}},
		{"no endpoint", "", store(notFound.URL+"/ds", "fuseki", loaded), wantCheck{checkFailed, []string{"no SPARQL query endpoint at " + notFound.URL + "/ds/query", "404"}, []string{"--store-type"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := doctorDefaults("http://127.0.0.1:1/v1")
			opts.input, opts.store = tt.input, tt.store
			checkResultIs(t, checkStore(t.Context(), opts, howToSet(doctorFlags(&doctorOptions{}))), tt.want)
		})
	}
}

// TestDoctorExitCodes runs kgrag doctor: exit 0 when every check passes or
// is skipped, 1 when one fails, with the report on stdout.
func TestDoctorExitCodes(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: 16})
	index := doctorIndex(t, doctorModel, 16, 3)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{"all ok", []string{"doctor", "--llm-url", srv.URL(), "--index", index}, 0,
			[]string{"skipped  store", "ok       index", "ok       embedder", "ok       chat", "warn     chat window", "warn     embedding window"}, ""},
		{"a failure", []string{"doctor", "--llm-url", srv.URL(), "--index", filepath.Join(t.TempDir(), "none")}, 1,
			[]string{"FAIL     index", "fix: build it with kgrag embed"}, "kgrag: doctor: 1 of 6 checks failed"},
		{"arguments", []string{"doctor", "extra"}, 2, nil, "doctor takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runKgrag(t, tt.args...)
			if code != tt.code {
				t.Errorf("kgrag %s: exit %d; want %d\nstdout:\n%s\nstderr: %s", strings.Join(tt.args, " "), code, tt.code, stdout, stderr)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tt.stderr)
			}
		})
	}
}

// TestDoctorGlobal: with --mode global the reports up to the level are
// counted (from the dataset itself here, and from a store), the index and
// embedder are skipped, and an output without reports fails with a fix.
func TestDoctorGlobal(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Models: []string{defaultChatModel}})
	v3 := filepath.Join(test.GraphRAGSamples(t), "v3")
	ds, err := graphrag.Open(t.Context(), v3)
	if err != nil {
		t.Fatal(err)
	}
	reportsUpTo := func(level int64) int {
		n := 0
		for _, c := range ds.Communities {
			if c.Level <= level && c.Report != nil {
				n++
			}
		}
		return n
	}
	// The same output without its reports.
	noReports := t.TempDir()
	bare := *ds
	bare.Communities = slices.Clone(ds.Communities)
	for i := range bare.Communities {
		bare.Communities[i].Report = nil
	}
	if err := graphrag.Write3x(t.Context(), noReports, &bare); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		input   string
		level   int64
		reports wantCheck
	}{
		{"v3 level 2", v3, 2, wantCheck{checkOK, []string{fmt.Sprintf("holds %d community reports up to level 2", reportsUpTo(2))}, nil}},
		{"v3 level 0", v3, 0, wantCheck{checkOK, []string{fmt.Sprintf("holds %d community reports up to level 0", reportsUpTo(0))}, nil}},
		{"no reports", noReports, 2, wantCheck{checkFailed, []string{"holds no community report up to level 2"}, []string{"create_community_reports", "--community-level"}}},
		{"no graph", "", 2, wantCheck{checkSkipped, []string{"no graph configured"}, []string{"--input", "--store"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := doctorDefaults(srv.URL())
			opts.mode, opts.level, opts.input = modeGlobal, tt.level, tt.input
			results := runChecks(t.Context(), opts)
			checkResultIs(t, findCheck(t, results, "reports"), tt.reports)
			checkResultIs(t, findCheck(t, results, "index"), wantCheck{checkSkipped, []string{"not needed by --mode global"}, nil})
			checkResultIs(t, findCheck(t, results, "embedder"), wantCheck{checkSkipped, nil, nil})
			checkResultIs(t, findCheck(t, results, "chat"), wantCheck{checkOK, []string{defaultChatModel}, nil})
		})
	}

	// A server that is down: the chat check says why, as the hidden
	// embedder check would have.
	opts := doctorDefaults("http://127.0.0.1:1/v1")
	opts.mode, opts.level, opts.input = modeGlobal, 2, v3
	checkResultIs(t, findCheck(t, runChecks(t.Context(), opts), "chat"), wantCheck{checkFailed, []string{"127.0.0.1:1"}, []string{"--llm-url"}})
}

// TestDoctorDriftAndBasic: --mode basic checks the text units' index in
// place of the entities'; --mode drift checks the reports' index too and
// refuses one of another model than the entities'.
func TestDoctorDriftAndBasic(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Models: []string{defaultChatModel, doctorModel, "other-model"}, Dim: 24})
	write := func(dir, table, model string, n int) {
		t.Helper()
		ids := make([]string, n)
		vecs := make([][]float32, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("%s-%d", table, i)
			vecs[i] = llmtest.Embed(model, ids[i], 24)
		}
		if err := flat.Write(t.Context(), filepath.Join(dir, location.File(table)), model, ids, vecs); err != nil {
			t.Fatal(err)
		}
	}
	entitiesOnly := t.TempDir()
	write(entitiesOnly, tableEntities, doctorModel, 5)
	all := t.TempDir()
	for _, table := range embedTables {
		write(all, table, doctorModel, 4)
	}
	mixed := t.TempDir()
	write(mixed, tableEntities, doctorModel, 5)
	write(mixed, tableReports, "other-model", 5)

	tests := []struct {
		name, mode, index string
		check             string
		want              wantCheck
	}{
		{"basic, no text units' index", modeBasic, entitiesOnly, "index (text units)", wantCheck{checkFailed, []string{"text_units.vec"}, []string{"kgrag embed --input DIR --tables text_units"}}},
		{"basic", modeBasic, all, "index (text units)", wantCheck{checkOK, []string{"4 vectors"}, nil}},
		{"drift, no reports' index", modeDrift, entitiesOnly, "index (community reports)", wantCheck{checkFailed, []string{"community_reports.vec"}, []string{"--tables community_reports"}}},
		{"drift", modeDrift, all, "index (community reports)", wantCheck{checkOK, []string{"4 vectors"}, nil}},
		{"drift, reports of another model", modeDrift, mixed, "index (community reports)", wantCheck{checkFailed, []string{"other-model", "the entities' index is of " + doctorModel}, []string{"--tables all --embed-model " + doctorModel}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := doctorDefaults(srv.URL())
			opts.mode, opts.index.path = tt.mode, tt.index
			checkResultIs(t, findCheck(t, runChecks(t.Context(), opts), tt.check), tt.want)
		})
	}
}
