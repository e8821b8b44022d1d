package snapshot

import "github.com/kgrag/kgrag/graphrag"

// The fields each record keeps are those retrieval reads; the rest of a
// row (embeddings, findings, covariates, documents) stays in the parquet
// files. A record's first fields are its keys, so that a lookup compares
// a key without decoding the record.

func putEntity(e *enc, x *graphrag.Entity) {
	e.str(x.ID)
	e.str(x.Title)
	e.str(x.HumanReadableID)
	e.str(x.Description)
	e.flags(x.HasDegree, x.Placeholder)
	e.int(x.Degree)
	e.strs(x.TextUnitIDs)
	e.strs(x.Communities)
}

func getEntity(d *dec) graphrag.Entity {
	var x graphrag.Entity
	x.ID = d.str()
	x.Title = d.str()
	x.HumanReadableID = d.str()
	x.Description = d.str()
	f := d.flags()
	x.HasDegree, x.Placeholder = f(0), f(1)
	x.Degree = d.int()
	x.TextUnitIDs = d.strs()
	x.Communities = d.strs()
	return x
}

// EntityName is an entity's keys: what a relationship end or a lookup
// needs without the description.
type EntityName struct {
	ID, Title, HumanReadableID string
}

func getEntityName(d *dec) EntityName {
	return EntityName{ID: d.str(), Title: d.str(), HumanReadableID: d.str()}
}

func putUnit(e *enc, x *graphrag.TextUnit) {
	e.str(x.ID)
	e.str(x.HumanReadableID)
	e.str(x.Text)
	e.flags(x.HasNTokens)
	e.int(x.NTokens)
	e.strs(x.RelationshipIDs)
}

func getUnit(d *dec) graphrag.TextUnit {
	var x graphrag.TextUnit
	x.ID = d.str()
	x.HumanReadableID = d.str()
	x.Text = d.str()
	x.HasNTokens = d.flags()(0)
	x.NTokens = d.int()
	x.RelationshipIDs = d.strs()
	return x
}

func putRelationship(e *enc, x *graphrag.Relationship) {
	e.str(x.ID)
	e.str(x.HumanReadableID)
	e.str(x.Source)
	e.str(x.Target)
	e.str(x.SourceID)
	e.str(x.TargetID)
	e.str(x.Description)
	e.flags(x.HasWeight, x.HasRank)
	e.f64(x.Weight)
	e.int(x.Rank)
	e.strs(x.TextUnitIDs)
}

func getRelationship(d *dec) graphrag.Relationship {
	var x graphrag.Relationship
	x.ID = d.str()
	x.HumanReadableID = d.str()
	x.Source = d.str()
	x.Target = d.str()
	x.SourceID = d.str()
	x.TargetID = d.str()
	x.Description = d.str()
	f := d.flags()
	x.HasWeight, x.HasRank = f(0), f(1)
	x.Weight = d.f64()
	x.Rank = d.int()
	x.TextUnitIDs = d.strs()
	return x
}

func putCommunity(e *enc, x *graphrag.Community) {
	e.str(x.Community)
	e.str(x.ID)
	e.str(x.HumanReadableID)
	e.int(x.Level)
	e.str(x.Parent)
	e.str(x.Title)
	e.f64(x.Weight)
	r := x.Report
	e.flags(r != nil, r != nil && r.HasRank)
	if r != nil {
		e.str(r.Title)
		e.str(r.Summary)
		e.str(r.FullContent)
		e.f64(r.Rank)
	}
}

// getCommunity decodes a community; its Report holds only Title,
// Summary, FullContent, Rank and HasRank.
func getCommunity(d *dec) graphrag.Community {
	var x graphrag.Community
	x.Community = d.str()
	x.ID = d.str()
	x.HumanReadableID = d.str()
	x.Level = d.int()
	x.Parent = d.str()
	x.Title = d.str()
	x.Weight = d.f64()
	f := d.flags()
	if f(0) {
		x.Report = &graphrag.CommunityReport{Title: d.str(), Summary: d.str(), FullContent: d.str(), Rank: d.f64(), HasRank: f(1)}
	}
	return x
}
