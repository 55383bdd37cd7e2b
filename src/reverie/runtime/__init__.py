"""The agent run: the session-history tools (more of the run arrives with the runtime issue)."""
