"""Passage recall@k of plain Okapi BM25 (rank_bm25's BM25Okapi) on a
published multi-hop set, the lexical baseline of the multi-hop papers,
computed without kgrag: the peer of kgrag's own retrieval in the bench's
multihop step.

Usage: bm25_recall.py QUESTIONS.json CORPUS.json

QUESTIONS is HotpotQA's (or 2WikiMultiHopQA's) JSON list; CORPUS is
HippoRAG's packing, an object from title to sentences (or a list of
{title, text}). A passage is its title, a line break and its text, as
HippoRAG indexes it; words are lower-cased runs of letters and digits.
The gold passages of a question are the titles of its supporting facts.
Prints one JSON object: questions, passages, recall_at_2, recall_at_5 (the
share of a question's gold passages among the first k, averaged).
"""

import json
import re
import sys

from rank_bm25 import BM25Okapi


def words(s):
    return re.findall(r"\w+", s.lower())


def main():
    questions = json.load(open(sys.argv[1], encoding="utf-8"))
    corpus = json.load(open(sys.argv[2], encoding="utf-8"))
    if isinstance(corpus, dict):
        passages = [(t, "".join(s) if isinstance(s, list) else s) for t, s in corpus.items()]
    else:
        passages = [(p["title"], p["text"]) for p in corpus]
    titles = [t for t, _ in passages]
    bm25 = BM25Okapi([words(t + "\n" + x) for t, x in passages])
    at = {2: 0.0, 5: 0.0}
    for q in questions:
        gold = {t for t, _ in q["supporting_facts"]}
        scores = bm25.get_scores(words(q["question"]))
        order = sorted(range(len(titles)), key=lambda i: (-scores[i], i))
        for k in at:
            at[k] += len(gold & {titles[i] for i in order[:k]}) / len(gold)
    n = len(questions)
    print(json.dumps({"questions": n, "passages": len(passages),
                      "recall_at_2": at[2] / n, "recall_at_5": at[5] / n}))


if __name__ == "__main__":
    main()
