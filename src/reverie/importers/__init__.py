"""Converters from other conversation formats to Reverie's JSON Lines import format (SPEC 15).

An importer is a pure function from parsed data to records (dicts), one message or one
``{"conversation": ID, "closed": true}`` line each; reading files and calling
``reverie conversations import`` stay at the edge. ``locomo`` converts the LoCoMo benchmark
(long-term conversational memory) so that the history-search benchmark runs on real
conversations.
"""
