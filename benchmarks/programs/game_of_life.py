"""Conway's game of life on a wrapping board: neighbour counts with np.roll, the rules with
boolean masks, population recorded every generation."""

import numpy as np

SIZE = 512
GENERATIONS = 200


def initial_board(n):
    i, j = np.indices((n, n))
    return ((i * 7 + j * 13) % 11 < 4) | ((i * j) % 17 == 3)


def main():
    board = initial_board(SIZE).astype(np.int8)
    population = np.zeros(GENERATIONS, dtype=np.int64)
    for gen in range(GENERATIONS):
        neighbours = np.zeros_like(board)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                if dy != 0 or dx != 0:
                    neighbours += np.roll(np.roll(board, dy, axis=0), dx, axis=1)
        born = (board == 0) & (neighbours == 3)
        survives = (board == 1) & ((neighbours == 2) | (neighbours == 3))
        board[:] = 0
        board[born | survives] = 1
        population[gen] = board.sum()
    return {"population": population, "board_rows": board[:8]}
