package prompttune

import (
	"strings"
	"testing"
)

// TestReadReplies: small models' replies, as seen from Gemma 3 270M and
// as other models write them, read into what the tuning keeps.
func TestReadReplies(t *testing.T) {
	types := []struct {
		reply, want string
	}{
		{"person, place, organisation", "person,place,organisation"},
		{"<think>hmm</think>\n1. Person\n2. **Place**\n3. other\n4. person", "person,place"},
		{"child, parent, brother, sister, friend, etc.", "child,parent,brother,sister,friend"}, // Gemma 3 270M's reply
		{`{"entity_types": ["ship", "crew member"]}`, "ship,crew member"},
		{"Here are the kinds: ghost; spirit; disease or law", "ghost,spirit"},
		{"1. 2. 3.", ""},
	}
	for _, tt := range types {
		if got := strings.Join(entityTypes(tt.reply, 8), ","); got != tt.want {
			t.Errorf("entityTypes(%q) = %q; want %q", tt.reply, got, tt.want)
		}
	}
	phrases := []struct {
		reply, want string
		ok          bool
	}{
		{"**Field:** \"Victorian fiction\".", "Victorian fiction", true},
		{"The domain of this text is the domain of death.", "death", true},
		{"1.", "", false},
		{"\nThe Project Gutenberg eBook of A Christmas Carol This ebook is for the use of anyone anywhere", "", false},
	}
	for _, tt := range phrases {
		if got, ok := phrase(tt.reply, 6); got != tt.want || ok != tt.ok {
			t.Errorf("phrase(%q) = %q, %v; want %q, %v", tt.reply, got, ok, tt.want, tt.ok)
		}
	}
	for _, tt := range []struct{ reply, want string }{{"The language is English.", "English"}, {"Mandarin", "Chinese"}, {"Answer: Answer:", ""}} {
		if got := languageName(tt.reply); got != tt.want {
			t.Errorf("languageName(%q) = %q; want %q", tt.reply, got, tt.want)
		}
	}
	for _, tt := range []struct{ text, want string }{{"Marley was dead: to begin with. There is no doubt whatever about that.", "English"},
		{"马利已经死了，这一点毫无疑问。", "Chinese"}, {"Der Mann und die Frau sind nicht zu Hause, das ist klar.", "German"}} {
		if got := guessLanguage(tt.text); got != tt.want {
			t.Errorf("guessLanguage(%q) = %q; want %q", tt.text, got, tt.want)
		}
	}
	if _, ok := prose("10 Score: 2.5 10 Score: 3.5 10 Score: 4.5 10 Score: 5.5", 6, 400); ok {
		t.Error("prose accepted a looping reply")
	}
}
