package tuples

import "strings"

// claimFields is the number of fields of a claim record.
const claimFields = 8

// ParseClaims reads the claims in one reply to a GraphRAG-style claim
// extraction prompt, with the tolerance of ParseGraph. A record may start
// with a "claim" kind, which GraphRAG's format does not have; records of
// other kinds are dropped. A claim is kept when it has a subject and a
// type or description; missing fields are left empty (counted) and extra
// ones are joined to the source text.
func ParseClaims(reply string, d Delimiters) ClaimsResult {
	d = d.withDefaults()
	rep := repairs{}
	res := ClaimsResult{Repairs: rep}
	for _, text := range scan(reply, d, claimFormat{d}, rep) {
		res.Records++
		rec, ok := parseRecord(text, d)
		reason := ReasonNoDelimiter
		var c Claim
		if ok {
			c, reason = buildClaim(&rec)
		}
		if reason != "" {
			res.Dropped = append(res.Dropped, Dropped{Record: strings.TrimSpace(text), Reason: reason})
			continue
		}
		res.Claims = append(res.Claims, c)
		rep.merge(rec.rep)
	}
	return res
}

// claimFormat is the record syntax of claim extraction replies: no kind,
// so a record begins where the tuple delimiter is.
type claimFormat struct{ d Delimiters }

func (c claimFormat) start(p string) startKind {
	u, _ := stripMarker(p)
	if kind, ok := kindPrefix(u); ok && kind == "claim" || strings.HasPrefix(u, "(") && hasTuple(u, c.d.Tuple) {
		return strongStart
	}
	if hasTuple(u, c.d.Tuple) {
		return weakStart
	}
	return noStart
}

func (c claimFormat) startsKind(kind string) bool { return kind == "claim" }

func (c claimFormat) need(first string) int {
	if kind, _ := normKind(strings.TrimLeft(first, "( \t")); kind == "claim" {
		return claimFields + 1
	}
	return claimFields
}

func buildClaim(rec *record) (Claim, string) {
	f := rec.fields
	if kind, _ := normKind(f[0]); kind != "" {
		if kind != "claim" {
			return Claim{}, ReasonUnknownKind
		}
		f = f[1:]
		rec.rep.add(RepairKind, 1)
	}
	f, n := trimTrailingEmpty(f, claimFields)
	rec.rep.add(RepairExtraField, n)
	if len(f) == 0 {
		return Claim{}, ReasonNoSubject
	}
	c := Claim{Subject: normName(f[0], rec.rep)}
	if c.Subject == "" {
		return Claim{}, ReasonNoSubject
	}
	rec.rep.add(RepairMissingField, claimFields-len(f))
	field := func(i int, norm func(string, repairs) string) string {
		if i >= len(f) {
			return ""
		}
		if i == claimFields-1 {
			return present(joinText(f[i:], rec.rep), rec.rep)
		}
		return present(norm(f[i], rec.rep), rec.rep)
	}
	c.Object = field(1, normName)
	c.Type = field(2, normName)
	c.Status = field(3, normName)
	c.StartDate = field(4, normText)
	c.EndDate = field(5, normText)
	c.Description = field(6, normText)
	c.SourceText = field(7, normText)
	if c.Type == "" && c.Description == "" {
		return Claim{}, ReasonNoClaimContent
	}
	return c, ""
}
