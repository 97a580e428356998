"""The reinforcement-learning layer (newton_tendon.rl) and the example environments."""
