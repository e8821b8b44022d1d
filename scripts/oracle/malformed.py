#!/usr/bin/env python3
"""Builds a damaged copy of a GraphRAG output, the fixture for kgrag's
quarantine rule (rows with a blank key are left out, not fatal; see
counts.py for the rule and the expected counts).

usage: malformed.py SRC DST

Copies every file of the release folder SRC into DST (created if need be),
then rewrites, with pyarrow alone and each file's schema kept exactly
(column types, list and null-typed columns, schema metadata):

  1. entities row 3: title (`name` in 0.3/0.4) set to "" and type set to a
     sentence, as when a model's output is mis-parsed;
  2. entities row 7: id set to null;
  3. relationships row 5: target set to "";
  4. when communities has entity_ids: row 3's entity id appended to the
     members of the first community numbered >= 0, so that a community
     names an entity that is left out.

Rows are counted from 0. Prints one JSON object saying what was changed.
"""
import json
import os
import shutil
import sys

import pyarrow as pa
import pyarrow.parquet as pq

SENTENCE = "The entity is a sentence the model wrote where a type belongs."


def copy_release(src, dst):
    """Copies SRC's files into DST. Plain copyfile, not copytree: the
    shared samples are read-only, and their modes must not follow (DST has
    to stay writable and removable)."""
    for root, _, files in os.walk(src):
        out = os.path.join(dst, os.path.relpath(root, src))
        os.makedirs(out, exist_ok=True)
        for f in files:
            shutil.copyfile(os.path.join(root, f), os.path.join(out, f))


def find(d, name):
    """Path of table name in d (2.x+ name, else create_final_ name)."""
    for n in (name, "create_final_" + name):
        p = os.path.join(d, n + ".parquet")
        if os.path.exists(p):
            return p
    return None


def set_cells(t, col, changes):
    """t with column col's rows changed ({row: value}); the column is
    rebuilt with its own type, so the schema stays the same."""
    i = t.schema.get_field_index(col)
    field = t.schema.field(i)
    vals = t.column(i).to_pylist()
    for row, v in changes.items():
        vals[row] = v
    return t.set_column(i, field, pa.array(vals, type=field.type))


def rewrite(path, t, before):
    """Writes t back over path, after checking the schema is unchanged."""
    if not t.schema.equals(before, check_metadata=True):
        sys.exit(f"malformed.py: schema of {path} changed:\n{before}\n->\n{t.schema}")
    pq.write_table(t, path)


def community_number(v):
    """A community number as an int, or None when it is not one."""
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: malformed.py SRC DST")
    src, dst = sys.argv[1], sys.argv[2]
    copy_release(src, dst)
    report = {"release_dir": dst}

    # 1 and 2: the entities table.
    path = find(dst, "entities")
    ents = pq.read_table(path)
    schema = ents.schema
    title_col = "title" if "title" in ents.column_names else "name"
    ids = ents.column("id").to_pylist()
    titles = ents.column(title_col).to_pylist()
    report["entity_empty_title"] = {"row": 3, "id": ids[3], "old_title": titles[3]}
    report["entity_null_id"] = {"row": 7, "title": titles[7]}
    ents = set_cells(ents, title_col, {3: ""})
    ents = set_cells(ents, "type", {3: SENTENCE})
    ents = set_cells(ents, "id", {7: None})
    rewrite(path, ents, schema)

    # 3: the relationships table.
    path = find(dst, "relationships")
    rels = pq.read_table(path)
    schema = rels.schema
    report["relationship_empty_end"] = {"row": 5, "id": rels.column("id")[5].as_py()}
    rels = set_cells(rels, "target", {5: ""})
    rewrite(path, rels, schema)

    # 4: a community whose members include the entity with no title.
    report["community_member"] = None
    path = find(dst, "communities")
    comms = pq.read_table(path) if path else None
    if comms is not None and "entity_ids" in comms.column_names:
        schema = comms.schema
        num_col = "community" if "community" in comms.column_names else "id"
        for row, v in enumerate(comms.column(num_col).to_pylist()):
            n = community_number(v)
            if n is not None and n >= 0:
                members = comms.column("entity_ids")[row].as_py() or []
                comms = set_cells(comms, "entity_ids", {row: members + [ids[3]]})
                rewrite(path, comms, schema)
                report["community_member"] = {"community": v, "entity_id": ids[3]}
                break

    json.dump(report, sys.stdout)
    print()


if __name__ == "__main__":
    main()
