"""Games: matrix games now; board, card and dice games (tic-tac-toe, connect four,
poker, Liar's dice, Hanabi) follow in their own modules."""
