package tuples

import (
	"strings"
)

// ParseGraph reads the entities and relationships in one reply to a
// GraphRAG-style graph extraction prompt. It never fails: what cannot be
// read safely is in Result.Dropped with a reason, and what was fixed on
// the way is counted in Result.Repairs. Parse each reply (each gleaning
// round too) on its own: GraphRAG joins rounds with nothing between them,
// which glues the last record of one to the first of the next when the
// model left out the completion delimiter.
func ParseGraph(reply string, d Delimiters) Result {
	d = d.withDefaults()
	rep := repairs{}
	res := Result{Repairs: rep}
	drop := func(text, reason string) {
		res.Dropped = append(res.Dropped, Dropped{Record: strings.TrimSpace(text), Reason: reason})
	}
	for _, text := range scan(reply, d, graphFormat{d}, rep) {
		res.Records++
		rec, ok := parseRecord(text, d)
		if !ok {
			drop(text, ReasonNoDelimiter)
			continue
		}
		kind, exact := normKind(rec.fields[0])
		count(rec.rep, RepairKind, !exact)
		var reason string
		switch kind {
		case "entity":
			var e Entity
			if e, reason = buildEntity(&rec); reason == "" {
				res.Entities = append(res.Entities, e)
			}
		case "relationship":
			var r Relationship
			if r, reason = buildRelationship(&rec); reason == "" {
				res.Relationships = append(res.Relationships, r)
			}
		default:
			reason = ReasonUnknownKind
		}
		if reason != "" {
			drop(text, reason)
			continue
		}
		rep.merge(rec.rep)
	}
	return res
}

// graphFormat is the record syntax of graph extraction replies.
type graphFormat struct{ d Delimiters }

func (g graphFormat) start(p string) startKind {
	u, _ := stripMarker(p)
	if _, ok := kindPrefix(u); ok || strings.HasPrefix(u, "(") && hasTuple(u, g.d.Tuple) {
		return strongStart
	}
	if hasTuple(u, g.d.Tuple) {
		return weakStart
	}
	return noStart
}

func (g graphFormat) startsKind(string) bool { return true }

func (g graphFormat) need(first string) int {
	switch kind, _ := normKind(strings.TrimLeft(first, "( \t")); kind {
	case "entity":
		return 4
	case "relationship":
		return 5
	}
	return 0
}

// buildEntity reads NAME, TYPE, DESCRIPTION after the kind. With two
// fields the second is taken for a description when it reads like one
// (see looksLikeDescription), else for the type; with one, the entity is
// a bare name. Extra fields are joined to the description, but a number
// at the end (a strength written on an entity) is dropped.
func buildEntity(rec *record) (Entity, string) {
	f, n := trimTrailingEmpty(rec.fields[1:], 3)
	rec.rep.add(RepairExtraField, n)
	if len(f) > 3 && isNumber(f[len(f)-1]) {
		f = f[:len(f)-1]
		rec.rep.add(RepairExtraField, 1)
	}
	if len(f) == 0 {
		return Entity{}, ReasonNoName
	}
	e := Entity{Title: normName(f[0], rec.rep)}
	if e.Title == "" {
		return Entity{}, ReasonNoName
	}
	switch len(f) {
	case 1:
		rec.rep.add(RepairMissingField, 2)
	case 2:
		rec.rep.add(RepairMissingField, 1)
		if looksLikeDescription(f[1]) {
			e.Description = present(normText(f[1], rec.rep), rec.rep)
		} else {
			e.Type = present(normName(f[1], rec.rep), rec.rep)
		}
	default:
		e.Type = present(normName(f[1], rec.rep), rec.rep)
		e.Description = present(joinText(f[2:], rec.rep), rec.rep)
	}
	return e, ""
}

// buildRelationship reads SOURCE, TARGET, DESCRIPTION, STRENGTH after the
// kind. With three fields the third is the strength when it is a number,
// else the description; with more than four, the last is the strength
// and the middle ones are joined into the description.
func buildRelationship(rec *record) (Relationship, string) {
	f, n := trimTrailingEmpty(rec.fields[1:], 4)
	rec.rep.add(RepairExtraField, n)
	if len(f) < 2 {
		return Relationship{}, ReasonNoEnds
	}
	r := Relationship{Source: normName(f[0], rec.rep), Target: normName(f[1], rec.rep)}
	switch {
	case r.Source == "" || r.Target == "":
		return Relationship{}, ReasonNoEnds
	case r.Source == r.Target:
		return Relationship{}, ReasonSelfLoop
	}
	strength, hasStrength := "", true
	switch {
	case len(f) == 2:
		rec.rep.add(RepairMissingField, 1)
		hasStrength = false
	case len(f) == 3 && isNumber(f[2]):
		rec.rep.add(RepairMissingField, 1)
		strength = f[2]
	case len(f) == 3:
		r.Description = present(normText(f[2], rec.rep), rec.rep)
		hasStrength = false
	default:
		r.Description = present(joinText(f[2:len(f)-1], rec.rep), rec.rep)
		strength = f[len(f)-1]
	}
	r.Weight = DefaultWeight
	if !hasStrength {
		rec.rep.add(RepairWeightMissing, 1)
		return r, ""
	}
	w, st, paren := parseWeight(strength, rec.rep)
	if paren && !rec.parens {
		rec.parens = true
		rec.rep.add(RepairParentheses, 1)
	}
	switch st {
	case weightOK:
		r.Weight, r.HasWeight = w, true
	case weightMissing:
		rec.rep.add(RepairWeightMissing, 1)
	case weightNotNumeric:
		rec.rep.add(RepairWeightNotNumeric, 1)
	case weightOutOfRange:
		rec.rep.add(RepairWeightOutOfRange, 1)
	}
	return r, ""
}

// joinText cleans fields and joins the non-empty ones with spaces,
// counting all but the first as extra.
func joinText(f []string, rep repairs) string {
	rep.add(RepairExtraField, len(f)-1)
	if len(f) == 1 {
		return normText(f[0], rep)
	}
	var parts []string
	for _, s := range f {
		if t := normText(s, rep); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " ")
}

// present counts an empty field that was written.
func present(s string, rep repairs) string {
	count(rep, RepairEmptyField, s == "")
	return s
}

// isNumber reports whether a field reads as a strength (in range or not).
func isNumber(s string) bool {
	_, st, _ := parseWeight(s, repairs{})
	return st == weightOK || st == weightOutOfRange
}

// looksLikeDescription tells a description from an entity type in a
// record that has only one of them: a sentence (ending in ".", "!" or
// "?") or more than six words. Types are short, even the NetworkX article's long ESG
// ones ("Target Baseline Year"); a type of seven words or more given
// without a description is taken for one.
func looksLikeDescription(s string) bool {
	t := cleanText(s)
	words := len(strings.Fields(t))
	return words > 6 || words > 1 && strings.ContainsAny(t[len(t)-1:], ".!?")
}
