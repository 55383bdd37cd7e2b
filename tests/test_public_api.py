"""The public API is a decision: __all__ lists exactly the public names of the package."""

from __future__ import annotations

import reverie


def test_all_matches_public_names() -> None:
    public = {n for n in dir(reverie) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(reverie, n)).__name__ == "module"}
    assert set(reverie.__all__) == public - modules
