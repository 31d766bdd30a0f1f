"""Writes tests/data/search-titles.txt: listing titles whose words follow a
real word distribution (wordfreq's English and, one word in twenty, French
frequencies), for measuring search (issue 21). Deterministic (seeded).

    python3 -m venv /tmp/wf && /tmp/wf/bin/pip install wordfreq==3.1.1
    /tmp/wf/bin/python tools/search-corpus/generate.py > tests/data/search-titles.txt

wordfreq is needed only to regenerate the file; the file is committed.
"""
import random

import wordfreq

TITLES = 3000
TOP = 20000


def distribution(lang):
    words = [w for w in wordfreq.top_n_list(lang, TOP) if any(c.isalpha() for c in w)]
    weights = [wordfreq.word_frequency(w, lang) for w in words]
    return words, weights


def main():
    rng = random.Random(21)
    en, en_w = distribution("en")
    fr, fr_w = distribution("fr")
    for _ in range(TITLES):
        n = rng.choice([2, 3, 3, 4, 4, 4, 5, 5, 6, 7])
        words = []
        for _ in range(n):
            if rng.random() < 0.05:
                words.append(rng.choices(fr, fr_w)[0])
            else:
                words.append(rng.choices(en, en_w)[0])
        title = " ".join(words)
        print(title[0].upper() + title[1:])


main()
