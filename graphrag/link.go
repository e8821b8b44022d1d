package graphrag

// link derives what the tables leave implicit: relationship ends as entity
// ids (with placeholders), community children from parents, text unit entity
// lists from entities, and community weights.
func (r *reader) link() {
	d := r.ds
	d.resolveEnds()
	if !r.haveChildren && r.haveParent {
		d.deriveChildren()
	}
	if !r.haveTextUnitEnts {
		d.deriveTextUnitEntities()
	}
	d.ComputeWeights()
}

// resolveEnds sets SourceID and TargetID from the entity titles GraphRAG
// writes in source and target, and SubjectEntityID and ObjectEntityID of
// claims likewise. A title that no entity has gets a placeholder entity
// (ID PlaceholderID(title)) so that no relationship or claim is dropped;
// GraphRAG itself writes such relationships (its 3.x test output holds 84)
// and claims about entities it never extracted.
func (d *Dataset) resolveEnds() {
	byTitle := make(map[string]string, len(d.Entities))
	for _, e := range d.Entities {
		if _, dup := byTitle[e.Title]; !dup {
			byTitle[e.Title] = e.ID
		}
	}
	placeholders, affected := 0, 0
	made := map[string]bool{}
	resolve := func(title string) (string, bool) {
		if id, ok := byTitle[title]; ok {
			return id, made[id]
		}
		id := PlaceholderID(title)
		byTitle[title] = id
		made[id] = true
		d.Entities = append(d.Entities, Entity{ID: id, Title: title, Placeholder: true})
		placeholders++
		return id, true
	}
	for i := range d.Relationships {
		rel := &d.Relationships[i]
		var ps, pt bool
		rel.SourceID, ps = resolve(rel.Source)
		rel.TargetID, pt = resolve(rel.Target)
		if ps || pt {
			affected++
		}
	}
	claims := 0
	for i := range d.Covariates {
		c := &d.Covariates[i]
		var ps, po bool
		if !IsNone(c.SubjectID) {
			c.SubjectEntityID, ps = resolve(c.SubjectID)
		}
		if !IsNone(c.ObjectID) {
			c.ObjectEntityID, po = resolve(c.ObjectID)
		}
		if ps || po {
			claims++
		}
	}
	d.Placeholders += placeholders
	d.PlaceholderRelationships += affected
	d.PlaceholderCovariates += claims
}

// deriveChildren fills Children from Parent (1.x has parent, not children),
// in community row order.
func (d *Dataset) deriveChildren() {
	index := make(map[string]int, len(d.Communities))
	for i, c := range d.Communities {
		if _, dup := index[c.Community]; !dup {
			index[c.Community] = i
		}
	}
	for _, c := range d.Communities {
		if c.Parent == "" {
			continue
		}
		if p, ok := index[c.Parent]; ok {
			d.Communities[p].Children = append(d.Communities[p].Children, c.Community)
		}
	}
}

// deriveTextUnitEntities fills TextUnit.EntityIDs from the entities'
// text_unit_ids, in entity row order, for releases whose text units lack
// entity_ids.
func (d *Dataset) deriveTextUnitEntities() {
	index := make(map[string]int, len(d.TextUnits))
	for i, tu := range d.TextUnits {
		index[tu.ID] = i
	}
	for _, e := range d.Entities {
		for _, id := range e.TextUnitIDs {
			if i, ok := index[id]; ok {
				d.TextUnits[i].EntityIDs = append(d.TextUnits[i].EntityIDs, e.ID)
			}
		}
	}
}

// ComputeWeights sets every Community.Weight to kgrag's occurrence weight:
// the number of distinct text units in which the community's member
// entities (EntityIDs) occur (the union of their TextUnitIDs), divided by
// the largest such number over all communities. Weights are thus in [0, 1],
// and all 0 when no community has any text unit.
//
// This is the "occurrence" weight of GraphRAG's local search
// (_compute_community_weights in query/context_builder/community_context.py:
// len(set(text_unit_ids of the entities whose community_ids hold the
// community)), divided by the largest). It matches GraphRAG >= 1.0, where an
// entity's community_ids are all its communities (read_indexer_entities
// explodes communities.entity_ids), with one difference: GraphRAG normalises
// over the reports passed to the context builder for one query, kgrag over
// every community of the dataset, so that the weight is a stable property of
// a community that can be stored (gr:weight). GraphRAG <= 0.4 gave each
// entity only its deepest community, so its weights of parent communities
// were smaller than kgrag's.
func (d *Dataset) ComputeWeights() {
	ents := make(map[string]int, len(d.Entities))
	for i, e := range d.Entities {
		if _, dup := ents[e.ID]; !dup {
			ents[e.ID] = i
		}
	}
	// Number the text units so that a stamp array can count distinct ones.
	tuIndex := make(map[string]int32, len(d.TextUnits))
	for _, tu := range d.TextUnits {
		if _, ok := tuIndex[tu.ID]; !ok {
			tuIndex[tu.ID] = int32(len(tuIndex))
		}
	}
	entTUs := make([][]int32, len(d.Entities))
	for i, e := range d.Entities {
		for _, id := range e.TextUnitIDs {
			n, ok := tuIndex[id]
			if !ok {
				n = int32(len(tuIndex))
				tuIndex[id] = n
			}
			entTUs[i] = append(entTUs[i], n)
		}
	}
	stamp := make([]int32, len(tuIndex))
	counts := make([]int, len(d.Communities))
	most := 0
	for ci, c := range d.Communities {
		gen := int32(ci + 1)
		n := 0
		for _, id := range c.EntityIDs {
			ei, ok := ents[id]
			if !ok {
				continue
			}
			for _, t := range entTUs[ei] {
				if stamp[t] != gen {
					stamp[t] = gen
					n++
				}
			}
		}
		counts[ci] = n
		most = max(most, n)
	}
	for ci := range d.Communities {
		if most == 0 {
			d.Communities[ci].Weight = 0
		} else {
			d.Communities[ci].Weight = float64(counts[ci]) / float64(most)
		}
	}
}
