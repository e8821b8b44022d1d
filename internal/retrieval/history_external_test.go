package retrieval_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/internal/test"
)

// TestGraphRAGConversationHistory checks a question asked after earlier
// turns against GraphRAG's own LocalSearchMixedContext given the same
// ConversationHistory: the text embedded (question plus earlier user
// turns) and the whole context, whose Conversation History table comes
// first and whose other sections share what it leaves of the budget.
func TestGraphRAGConversationHistory(t *testing.T) {
	py := graphragPython(t)
	dir := filepath.Join(test.GraphRAGSamples(t), "v3")
	ds, err := graphrag.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	u := func(s string) retrieval.Turn { return retrieval.Turn{Role: retrieval.RoleUser, Content: s} }
	a := func(s string) retrieval.Turn { return retrieval.Turn{Role: retrieval.RoleAssistant, Content: s} }
	var seven []retrieval.Turn
	for _, q := range []string{"Who is Scrooge?", "Who is Marley?", "Who is Bob?", "Who is Tim?", "Who is Fred?", "Who is Belle?", "Who is Fezziwig?"} {
		seven = append(seven, u(q), a("An answer about "+q))
	}
	histories := []struct {
		name    string
		history []retrieval.Turn
	}{
		{"none", nil},
		{"two questions with answers", []retrieval.Turn{u("Who is Scrooge?"), a("A miser [Data: Entities (1)]."), u("And his clerk?"), a("Bob Cratchit.")}},
		{"seven questions (more than the five kept)", seven},
		{"delimiter, quotes and a line break", []retrieval.Turn{u(`What does "Humbug|" mean?` + "\nTell me.")}},
		{"answer before any question", []retrieval.Turn{a("Hello, ask me about the book."), u("Who is Scrooge?")}},
		{"two answers to one question", []retrieval.Turn{u("Who is Scrooge?"), a("A miser."), a("And a partner of Marley.")}},
	}
	cases := grV3Selections(t, ds)[:8]
	for _, variant := range []struct {
		name  string
		flags []string
		edit  func(*retrieval.Params)
	}{
		{"user turns only", nil, func(*retrieval.Params) {}},
		{"with answers, three turns", []string{"--history-answers", "--history-turns", "3"}, func(p *retrieval.Params) { p.HistoryAnswers, p.HistoryTurns = true, 3 }},
	} {
		p := retrieval.DefaultParams()
		variant.edit(&p)
		vis := grVisible(ds, p.CommunityLevel)
		type line struct {
			IDs      []string            `json:"ids"`
			Question string              `json:"question"`
			History  []map[string]string `json:"history"`
		}
		var lines []any
		var want []string // SearchText
		var kgCtx []*retrieval.Context
		b := newBuilder(t, retrieval.NewMemoryBackend(ds), p)
		for i, h := range histories {
			c := cases[i%len(cases)]
			ids := []string{}
			for _, id := range c.ids {
				if vis[id] && len(ids) < p.TopKEntities {
					ids = append(ids, id)
				}
			}
			l := line{IDs: ids, Question: "What happens at Christmas?"}
			for _, turn := range h.history {
				l.History = append(l.History, map[string]string{"role": turn.Role, "content": turn.Content})
			}
			lines = append(lines, l)
			want = append(want, retrieval.SearchText(l.Question, h.history, p.HistoryTurns))
			got, err := b.LocalContext(context.Background(), ids, h.history...)
			if err != nil {
				t.Fatal(err)
			}
			kgCtx = append(kgCtx, got)
		}
		gr := grStartOracleLines(t, py, dir, p, lines, append([]string{"--no-links-column"}, variant.flags...)...)()
		for i, h := range histories {
			name := variant.name + ", " + h.name
			if gr[i].Query != want[i] {
				t.Errorf("%s: text embedded: kgrag %q, GraphRAG %q", name, want[i], gr[i].Query)
			}
			if got := grText(kgCtx[i]); got != gr[i].Text {
				t.Errorf("%s: context differs:\n%s", name, grTextDiff(got, gr[i].Text))
			}
			if has := strings.HasPrefix(kgCtx[i].Text, "-----"+retrieval.SectionHistory+"-----\n"); has != (kgCtx[i].HistoryTurns > 0) || has != (len(h.history) > 0) {
				t.Errorf("%s: history table present %v, HistoryTurns %d, for %d turns", name, has, kgCtx[i].HistoryTurns, len(h.history))
			}
		}
	}
}
