"""Learners: one PPO core configured as IPPO/MAPPO/CPPO/DPO/role-based (not yet landed).

Until then ``python -m alem.train`` runs the ``random`` algorithm (a uniform
random legal policy) from :mod:`alem.rollout`.
"""
