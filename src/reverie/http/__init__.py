"""The HTTP surface of ``reverie serve``: the JSON API, the admin page and the MCP endpoint.

Needs the ``server`` extra (``pip install 'reverie[server]'``). :func:`create_app` builds the one
ASGI application; :mod:`reverie.http.serve` runs it with the review scheduler.
"""

from .app import create_app

__all__ = ["create_app"]
