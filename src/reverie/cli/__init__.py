"""The ``reverie`` command line (SPEC 15): parse, call the facade, format the answer.

The contract every command shares (global options, JSON errors, exit codes) is in
``_contract.py``; each command group is a module of its own.
"""

from . import conversations, doctor, memory, review
from ._contract import app, hoist_global_options, main

__all__ = ["app", "hoist_global_options", "main"]

# The command modules register themselves on ``app`` when imported.
del conversations, doctor, memory, review
