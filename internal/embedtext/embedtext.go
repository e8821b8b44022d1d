// Package embedtext is what kgrag embeds for each table of a GraphRAG
// output: the contract between kgrag embed, which writes the vectors, and
// kgrag ask and serve, which embed a question to search them (and the
// benchmarks and tests that build indexes of their own). A change here
// changes every index: change it only with the index format.
package embedtext

import (
	"strings"

	"github.com/kgrag/kgrag/graphrag"
)

// The tables whose texts are embedded, named as GraphRAG names them;
// GraphRAG 3.x embeds the same three texts (its entity_description,
// text_unit_text and community_full_content).
const (
	Entities  = graphrag.TableEntities
	TextUnits = graphrag.TableTextUnits
	Reports   = graphrag.TableCommunityReports
)

// Tables returns the tables in the order kgrag embed embeds them.
func Tables() []string { return []string{Entities, TextUnits, Reports} }

// Entity is the text embedded for an entity: "title:description", as
// GraphRAG writes it (no space after the colon).
func Entity(e graphrag.Entity) string { return e.Title + ":" + e.Description }

// Of returns the ids and texts of a table's rows that are embedded, and
// how many rows were left out for having no text:
//   - entities: Entity, by entity id, without the placeholders the reader
//     adds for dangling references;
//   - text units: the text, by text unit id;
//   - community reports: the full content, by community number (the id
//     every kgrag mode gives a report).
func Of(ds *graphrag.Dataset, table string) (ids, texts []string, empty int) {
	add := func(id, text string) {
		if strings.TrimSpace(text) == "" {
			empty++
			return
		}
		ids, texts = append(ids, id), append(texts, text)
	}
	switch table {
	case Entities:
		for _, e := range ds.Entities {
			if !e.Placeholder {
				add(e.ID, Entity(e))
			}
		}
	case TextUnits:
		for _, u := range ds.TextUnits {
			add(u.ID, u.Text)
		}
	case Reports:
		for _, c := range ds.Communities {
			if c.Report != nil {
				add(c.Community, c.Report.FullContent)
			}
		}
	}
	return ids, texts, empty
}
