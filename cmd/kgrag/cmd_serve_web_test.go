package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kgrag/kgrag/internal/embedtext"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
	"github.com/kgrag/kgrag/internal/test"
)

// browser starts headless Chromium, 1280x900, for at most timeout; shot
// saves a full-page PNG screenshot NAME.png in dir.
func browser(t *testing.T, chromium, dir string, timeout time.Duration) (context.Context, func(name string) chromedp.Action[chromedp.Void]) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("headless", "new"), chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancel)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel := context.WithTimeout(bctx, timeout)
	t.Cleanup(cancel)
	shot := func(name string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			b, err := chromedp.FullScreenshot(100)(ctx, tg)
			if err != nil {
				return chromedp.Void{}, err
			}
			return chromedp.Void{}, os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644)
		}
	}
	return ctx, shot
}

// TestServeWebPage drives the page in real headless Chromium: a question
// whose answer streams in and cites an entity, the citation followed to
// the entity page (with its IRI), its neighbourhood graph, and a community
// page. A screenshot of each page is kept (test.Artifacts).
func TestServeWebPage(t *testing.T) {
	chromium := test.Chromium(t)
	srv := llmtest.Start(t, llmtest.Config{Dim: askDim, ChunkDelay: 15 * time.Millisecond})
	f := newSampleFixture(t, "v3", srv)
	sf := startServe(t, f, nil)
	e := f.entity(t, "EBENEZER SCROOGE")
	q := embedtext.Entity(e)
	ctxWant := askContext(t, f.options(q)).Context
	ent := ctxWant.Records.Entities[0]
	reply := fmt.Sprintf("%s is a miser who learns to keep Christmas well, and the tale follows him through one night [Data: Entities (%s)].", ent.Title, ent.ID)
	srv.Reply("", reply)
	shots := test.Artifacts(t, "serve-web")

	ctx, shot := browser(t, chromium, shots, 90*time.Second)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return v
	}
	attr := func(sel, name string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
		if err != nil {
			t.Fatalf("%s of %s: %v", name, sel, err)
		}
		return v.Value
	}

	// Ask, and watch the answer arrive in pieces.
	run("open the page", chromedp.Navigate(sf.http.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#question")),
		chromedp.SendKeys(chromedp.CSS("#question"), q), chromedp.Click(chromedp.CSS("#ask")))
	partial, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const a = document.querySelector(".answer"); return a && a.textContent.length > 10 && !document.querySelector("a.cite") ? a.textContent : false })()`,
		chromedp.WithPollingInterval(5*time.Millisecond)))
	if err != nil {
		t.Fatalf("no part of the answer seen while it streamed: %v", err)
	}
	run("wait for the citation", chromedp.WaitVisible(chromedp.CSS("a.cite")), shot("ask"))
	full, href := text(".answer"), attr("a.cite", "href")
	if len(partial) >= len(reply) || !strings.HasPrefix(reply, partial) {
		t.Errorf("seen while streaming %q; want a part of the answer before the rest", partial)
	}
	if full != reply {
		t.Errorf("answer %q; want %q", full, reply)
	}
	if href != "/entity/"+ent.EntityID {
		t.Errorf("citation links to %q; want /entity/%s", href, ent.EntityID)
	}

	// The mode list is the server's models, from the registry.
	listed, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const o = [...document.querySelectorAll("#mode option")].map((o) => o.value); return o.length > 1 ? o.join(",") : false })()`,
		chromedp.WithPollingInterval(5*time.Millisecond)))
	var served []string
	for _, m := range engine.Modes() {
		if sf.s.Graph().Engines[m.Name] != nil {
			served = append(served, m.Name)
		}
	}
	if err != nil || listed != strings.Join(served, ",") {
		t.Errorf("the page offers modes %q (%v); want the served ones, %q", listed, err, strings.Join(served, ","))
	}

	// Follow the citation to the entity page, then its neighbourhood.
	run("follow the citation", chromedp.Click(chromedp.CSS("a.cite")), chromedp.WaitVisible(chromedp.CSS("#neighbourhood")), shot("entity"))
	title, iri, commHref := text("h1"), text("code.iri"), attr(`a[href^="/community/"]`, "href")
	if title != ent.Title || !strings.HasSuffix(iri, "/entity/"+ent.EntityID) {
		t.Errorf("entity page: title %q, IRI %q; want %q and an IRI ending in /entity/%s", title, iri, ent.Title, ent.EntityID)
	}
	run("open the neighbourhood", chromedp.Click(chromedp.CSS("#neighbourhood")), chromedp.WaitVisible(chromedp.CSS(`#cy[data-ready="1"]`)), shot("graph"))
	if nodes := attr("#cy", "data-nodes"); nodes == "" || nodes == "1" {
		t.Errorf("the neighbourhood graph drew %q nodes; want the entity and its neighbours", nodes)
	}

	run("open a community", chromedp.Navigate(sf.http.URL+commHref), chromedp.WaitVisible(chromedp.CSS("h2")), shot("community"))
	if ctitle := text("h1"); ctitle == "" || ctitle == "Loading…" {
		t.Errorf("community page title %q", ctitle)
	}
	t.Logf("screenshots in %s", shots)
}
