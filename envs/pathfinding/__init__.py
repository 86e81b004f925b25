"""Grid multi-agent pathfinding (one-shot and lifelong); no env has landed yet."""
