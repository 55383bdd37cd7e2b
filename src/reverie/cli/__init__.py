"""The ``reverie`` command line (SPEC 15): parse, call the facade, format the answer.

The contract every command shares (global options, JSON errors, exit codes) is in
``_contract.py``; each command group is a module of its own.
"""

from . import agentrun, chat, conversations, doctor, memory, review, server, slack
from ._contract import app, hoist_global_options, main

__all__ = ["app", "hoist_global_options", "main"]

# The command modules register themselves on ``app`` when imported.
del agentrun, chat, conversations, doctor, memory, review, server, slack
