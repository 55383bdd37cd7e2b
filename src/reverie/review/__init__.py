"""Review ("dreaming"): keep each agent's memory current from its finished conversations."""
