package prompts_test

import (
	"strings"
	"testing"

	"github.com/kgrag/kgrag/prompts"
)

func TestRenderLocalAnswer(t *testing.T) {
	got, err := prompts.Render("local_answer", prompts.LocalAnswer{
		Question: "Who is Scrooge?", Context: "-----Entities-----\nid|entity\n5|SCROOGE", ResponseType: "one paragraph",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Who is Scrooge?", "5|SCROOGE", "one paragraph", "[Data: Entities"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered prompt lacks %q", want)
		}
	}
	if strings.Contains(got, "{{") {
		t.Errorf("rendered prompt still holds template actions:\n%s", got)
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name string
		data any
		want string
	}{
		{"no_such_prompt", prompts.LocalAnswer{}, "no template"},
		{"local_answer", map[string]string{"Question": "q"}, "render local_answer"},
	}
	for _, tt := range tests {
		if _, err := prompts.Render(tt.name, tt.data); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Render(%q) error = %v; want it to mention %q", tt.name, err, tt.want)
		}
	}
}

// TestEveryTemplateParses renders each embedded template with an empty
// map: a syntax error fails here, not in front of a user.
func TestEveryTemplateParses(t *testing.T) {
	if len(prompts.Names()) == 0 {
		t.Fatal("no templates embedded")
	}
	for _, n := range prompts.Names() {
		if _, err := prompts.Render(n, prompts.LocalAnswer{}); err != nil && strings.Contains(err.Error(), "parse") {
			t.Errorf("%s: %v", n, err)
		}
	}
}
