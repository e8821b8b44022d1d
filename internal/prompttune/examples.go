package prompttune

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/kgrag/kgrag/internal/extraction/tuples"
	"github.com/kgrag/kgrag/prompts"
)

// Example is one worked example of the tuned extraction prompt: a
// passage of the corpus and the records kept from the model's reply.
type Example struct {
	Passage       string                `json:"passage"`
	Entities      []tuples.Entity       `json:"entities"`
	Relationships []tuples.Relationship `json:"relationships"`
}

// readExample keeps what of a reply to tune_example can teach: records
// kgrag's tuple parser reads, entities the passage names (a model that
// invents names, or copies them from the prompt's own example, would
// teach that) of a listed type (written as listed), and relationships
// between two kept entities, their strength a whole number from 1 to 10.
// dropped says, for the warning, why records were left out.
func readExample(passage, reply string, types []string) (ex Example, dropped []string) {
	p := tuples.ParseGraph(answer(reply), tuples.DefaultDelimiters())
	for _, d := range p.Dropped {
		dropped = append(dropped, d.Reason)
	}
	ex.Passage = passage
	lower := strings.ToLower(strings.Join(strings.Fields(passage), " "))
	typeOf := map[string]string{}
	for _, t := range types {
		typeOf[strings.ToLower(t)] = t
	}
	kept := map[string]bool{}
	for _, e := range p.Entities {
		t, ok := typeOf[strings.ToLower(e.Type)]
		switch {
		case kept[e.Title]:
			continue
		case !strings.Contains(lower, strings.ToLower(e.Title)):
			dropped = append(dropped, "entity not in the passage")
			continue
		case !ok:
			dropped = append(dropped, "type not listed")
			continue
		case len(strings.Fields(e.Description)) < 3 || placeholderRE.MatchString(e.Description):
			dropped = append(dropped, "no description")
			continue
		}
		e.Type = t
		kept[e.Title] = true
		ex.Entities = append(ex.Entities, e)
	}
	seen := map[[2]string]bool{}
	for _, r := range p.Relationships {
		key := [2]string{r.Source, r.Target}
		switch {
		case !kept[r.Source] || !kept[r.Target]:
			dropped = append(dropped, "relationship to an entity left out")
			continue
		case seen[key] || strings.TrimSpace(r.Description) == "":
			continue
		}
		seen[key] = true
		r.Weight = min(max(float64(int(r.Weight+0.5)), 1), 10)
		ex.Relationships = append(ex.Relationships, r)
	}
	return ex, dropped
}

// readList reads a reply to tune_example_list, lines of "NAME | TYPE |
// sentence" that small models write as "1. Name, what it is" as often:
// each line's name must be in the passage, start with a capital letter
// where the script has them and be at most five words; its type is the
// listed type the line names, else def (untyped counts those). The
// description is the rest of the line after the name.
func readList(passage, reply string, types []string, def string) (ex Example, untyped int) {
	ex.Passage = passage
	lower := strings.ToLower(strings.Join(strings.Fields(passage), " "))
	seen := map[string]bool{}
	for _, line := range strings.Split(answer(reply), "\n") {
		line = strings.TrimSpace(listMarkerRE.ReplaceAllString(htmlTagRE.ReplaceAllString(line, ""), ""))
		line = strings.ReplaceAll(line, "**", "")
		var parts []string
		if strings.Contains(line, "|") {
			parts = strings.Split(line, "|")
		} else if i := strings.IndexAny(line, ",:(–-"); i > 0 {
			parts = []string{line[:i], line[i+1:]}
		} else {
			continue
		}
		name := strings.Trim(strings.TrimSpace(parts[0]), unwrapChars+".")
		r := []rune(name)
		if len(r) < 2 || len(strings.Fields(name)) > 5 || unicode.IsLower(r[0]) || !strings.Contains(lower, strings.ToLower(name)) {
			continue
		}
		typ := ""
		var rest []string
		for _, p := range parts[1:] {
			p = strings.Trim(strings.TrimSpace(p), unwrapChars)
			if t := listedType(p, types); t != "" && typ == "" && len(strings.Fields(p)) <= 3 {
				typ = t
				continue
			}
			if p != "" {
				rest = append(rest, p)
			}
		}
		if typ == "" {
			typ = def
			untyped++
		}
		desc := strings.Join(strings.Fields(strings.Join(rest, "; ")), " ")
		title := strings.ToUpper(strings.Join(strings.Fields(name), " "))
		if desc == "" || seen[title] || placeholderRE.MatchString(desc) {
			continue
		}
		seen[title] = true
		if !strings.HasSuffix(desc, ".") {
			desc += "."
		}
		ex.Entities = append(ex.Entities, tuples.Entity{Title: title, Type: typ, Description: name + ": " + desc})
	}
	return ex, untyped
}

// listedType is the listed type s names (any case, a plural s ignored),
// or "".
func listedType(s string, types []string) string {
	l := strings.TrimSuffix(strings.ToLower(s), "s")
	for _, t := range types {
		if strings.TrimSuffix(strings.ToLower(t), "s") == l {
			return t
		}
	}
	return ""
}

// placeholderRE is a record format's field name copied into a field.
var placeholderRE = regexp.MustCompile(`\b(NAME|TYPE|DESCRIPTION|STRENGTH|SOURCE|TARGET)\b`)

// records writes the example's records in the record format, with
// sep between fields and rec between records and end after them.
func (ex Example) records(sep, rec, end string, lit func(string) string) string {
	var out []string
	for _, e := range ex.Entities {
		out = append(out, "(\"entity\""+sep+lit(e.Title)+sep+lit(e.Type)+sep+lit(e.Description)+")")
	}
	for _, r := range ex.Relationships {
		out = append(out, "(\"relationship\""+sep+lit(r.Source)+sep+lit(r.Target)+sep+lit(r.Description)+sep+strconv.Itoa(int(r.Weight))+")")
	}
	return strings.Join(out, "\n"+rec+"\n") + "\n" + end
}

// templateOutput is the example's records as the tuned template holds
// them: the delimiters as placeholders, the text escaped.
func (ex Example) templateOutput() string {
	return ex.records("{{.Tuple}}", "{{.Record}}", "{{.Completion}}", prompts.Literal)
}

// checkRoundTrip parses the example's records as a model would write
// them and compares: an example the parser would read otherwise than
// written (a delimiter inside a description) must not be shown.
func (ex Example) checkRoundTrip() error {
	d := tuples.DefaultDelimiters()
	p := tuples.ParseGraph(ex.records(d.Tuple, d.Record, d.Completion, func(s string) string { return s }), d)
	if len(p.Entities) != len(ex.Entities) || len(p.Relationships) != len(ex.Relationships) || len(p.Dropped) > 0 {
		return fmt.Errorf("reads back as %d entities and %d relationships, %d dropped; written %d and %d",
			len(p.Entities), len(p.Relationships), len(p.Dropped), len(ex.Entities), len(ex.Relationships))
	}
	for i, e := range p.Entities {
		if e.Title != ex.Entities[i].Title || e.Description != ex.Entities[i].Description {
			return fmt.Errorf("entity %q reads back as %q", ex.Entities[i].Title, e.Title)
		}
	}
	return nil
}

// summarizeDrops counts reasons: "2 entity not in the passage, 1 type
// not listed".
func summarizeDrops(reasons []string) string {
	n := map[string]int{}
	var order []string
	for _, r := range reasons {
		if n[r] == 0 {
			order = append(order, r)
		}
		n[r]++
	}
	var parts []string
	for _, r := range order {
		parts = append(parts, fmt.Sprintf("%d %s", n[r], r))
	}
	return strings.Join(parts, ", ")
}
