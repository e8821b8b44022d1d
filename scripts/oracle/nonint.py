#!/usr/bin/env python3
"""Builds a copy of a GraphRAG output whose integer columns hold values
that are not integers, as a writer's slip leaves them (the fixture for
kgrag's rule: such a value is read as missing, its row kept).

usage: nonint.py SRC DST

Copies the release folder SRC into DST, then, with pyarrow alone:

  - text units: n_tokens becomes float64 (as pandas writes an int column
    with a null in it), row 1 holding 2.5, row 2 infinity and row 3 NaN
    (pandas' null: missing, not a fault);
  - relationships: combined_degree (rank before 1.0) becomes float64, row
    4 holding 7.25;
  - documents: a metadata column of structs whose float field is NaN in
    row 0 (pandas' null where the rows' metadata differ): JSON has no NaN.

Rows are counted from 0. Prints one JSON object: the id of the document
whose metadata holds NaN ("document_nan"), and per table the file, the
column, the rows whose value is not an integer (NaN excluded), and for
every row the id and the value as an integer, or null where it is missing
or not an integer: what the loaded graph must hold.
"""
import json
import math
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq

from malformed import copy_release, find


def damage(path, cols, changes):
    """Casts the first of cols present to float64 and sets changes
    ({row: value}); returns the table's report."""
    t = pq.read_table(path)
    col = next(c for c in cols if c in t.column_names)
    i = t.schema.get_field_index(col)
    vals = [None if v is None else float(v) for v in t.column(i).to_pylist()]
    for row, v in changes.items():
        vals[row] = v
    t = t.set_column(i, pa.field(col, pa.float64()), pa.array(vals, type=pa.float64()))
    pq.write_table(t, path)
    ids = t.column("id").to_pylist()
    bad, values = [], {}
    for r, v in enumerate(vals):
        if v is None or math.isnan(v):
            values[str(ids[r])] = None
        elif math.isinf(v) or v != math.floor(v):
            bad.append(r)
            values[str(ids[r])] = None
        else:
            values[str(ids[r])] = int(v)
    return {"file": os.path.basename(path), "column": col, "bad_rows": bad, "values": values}


def add_metadata(path):
    """Sets documents' metadata to {"page": float, "source": str}, the
    page NaN in row 0 and 1.0 elsewhere."""
    t = pq.read_table(path)
    typ = pa.struct([("page", pa.float64()), ("source", pa.string())])
    vals = [{"page": math.nan if r == 0 else 1.0, "source": "scan"} for r in range(t.num_rows)]
    col = pa.array(vals, type=typ)
    if "metadata" in t.column_names:
        t = t.set_column(t.schema.get_field_index("metadata"), pa.field("metadata", typ), col)
    else:
        t = t.append_column(pa.field("metadata", typ), col)
    pq.write_table(t, path)
    return str(t.column("id")[0].as_py())


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: nonint.py SRC DST")
    src, dst = sys.argv[1], sys.argv[2]
    copy_release(src, dst)
    doc = add_metadata(find(dst, "documents"))
    report = {
        "document_nan": doc,
        "text_units": damage(find(dst, "text_units"), ["n_tokens"], {1: 2.5, 2: math.inf, 3: math.nan}),
        "relationships": damage(find(dst, "relationships"), ["combined_degree", "rank"], {4: 7.25}),
    }
    json.dump(report, sys.stdout)
    print()


if __name__ == "__main__":
    main()
