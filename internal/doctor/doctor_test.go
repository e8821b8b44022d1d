package doctor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/internal/doctor"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// TestModels runs the model checks against the test model server as it
// is set up: what each says, and the fix it names by the settings of How.
func TestModels(t *testing.T) {
	how := doctor.How{"embed-model": "--embed-model", "chat-model": "--chat-model", "llm-url": "--llm-url"}
	tests := []struct {
		name               string
		models             []string
		index              embedindex.Info
		chatModel          string
		wantEmb, wantChat  string // status
		embHolds, chatHold string
	}{
		{"all good", nil, embedindex.Info{Model: "emb", Dim: 16}, "chat", doctor.OK, doctor.OK, "dimension 16, as the index", "is served"},
		{"index of another dimension", nil, embedindex.Info{Model: "emb", Dim: 32}, "chat", doctor.Failed, doctor.OK, "index holds dimension 32", ""},
		{"index of another model", nil, embedindex.Info{Model: "other", Dim: 16}, "chat", doctor.Failed, doctor.OK, "built with other, not emb", ""},
		{"chat model not served", []string{"emb"}, embedindex.Info{}, "chat", doctor.OK, doctor.Failed, "no index to compare with", "does not serve chat model chat"},
		{"no chat model", nil, embedindex.Info{}, "", doctor.OK, doctor.Skipped, "", "no chat model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Config{Dim: 16, Models: tt.models})
			c, err := llm.New(llm.Config{BaseURL: srv.URL(), EmbedModel: "emb", HTTPClient: srv.Client(), Retries: -1, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			emb, chat := doctor.Models(context.Background(), c, tt.chatModel, false, tt.index, how)
			if emb.Status != tt.wantEmb || !strings.Contains(emb.Detail, tt.embHolds) {
				t.Errorf("embedder %s %q; want %s holding %q", emb.Status, emb.Detail, tt.wantEmb, tt.embHolds)
			}
			if chat.Status != tt.wantChat || !strings.Contains(chat.Detail, tt.chatHold) {
				t.Errorf("chat %s %q; want %s holding %q", chat.Status, chat.Detail, tt.wantChat, tt.chatHold)
			}
			if emb.Status == doctor.Failed && !strings.Contains(emb.Fix, "--embed-model") {
				t.Errorf("embedder fix %q names no setting", emb.Fix)
			}
		})
	}
}

func TestCopies(t *testing.T) {
	ok := func(n int) doctor.Result {
		return doctor.Result{Status: doctor.OK, Detail: "graph <g> holds " + strings.Repeat("1", n) + " entities"}
	}
	down := doctor.Result{Status: doctor.Failed, Detail: "no answer at http://b/ds/query", Fix: "start the store"}
	tests := []struct {
		name   string
		copies []doctor.Copy
		status string
		holds  []string
	}{
		{"alike", []doctor.Copy{{URL: "http://a/ds", Result: ok(2), Stamp: "d1/9"}, {URL: "http://b/ds", Result: ok(2), Stamp: "d1/9"}},
			doctor.OK, []string{"copy 1: graph <g> holds 11", "copy 2: graph <g> holds 11"}},
		{"one down", []doctor.Copy{{URL: "http://a/ds", Result: ok(2), Stamp: "d1/9"}, {URL: "http://b/ds", Result: down}},
			doctor.Warn, []string{"copy 2: no answer at http://b/ds/query"}},
		{"both down", []doctor.Copy{{URL: "http://a/ds", Result: down}, {URL: "http://b/ds", Result: down}},
			doctor.Failed, []string{"copy 1: no answer", "copy 2: no answer"}},
		{"different loads", []doctor.Copy{{URL: "http://a/ds", Result: ok(2), Stamp: "d2/9"}, {URL: "http://b/ds", Result: ok(2), Stamp: "d1/9"}},
			doctor.Warn, []string{"copy 2 holds the load recorded as d1/9", "copy 1 holds the load recorded as d2/9"}},
		{"no records", []doctor.Copy{{URL: "http://a/ds", Result: ok(2)}, {URL: "http://b/ds", Result: ok(2)}},
			doctor.Warn, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := doctor.Copies(tt.copies, doctor.How{})
			if r.Status != tt.status {
				t.Errorf("status %s, want %s: %s", r.Status, tt.status, r.Detail)
			}
			for _, h := range tt.holds {
				if !strings.Contains(r.Detail, h) {
					t.Errorf("detail %q does not hold %q", r.Detail, h)
				}
			}
			if r.Status != doctor.OK && r.Fix == "" {
				t.Errorf("status %s with no fix", r.Status)
			}
		})
	}
}
