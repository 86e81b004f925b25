"""Coordination worlds (MPE, foraging, warehouses, Overcooked); no env has landed yet."""
