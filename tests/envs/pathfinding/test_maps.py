"""Map generators, fixed layouts and the POGEMA ASCII / MovingAI loaders."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pytest

from alem.envs.pathfinding import grid as G
from alem.envs.pathfinding import maps as M

FIXTURES = Path(__file__).parent / "fixtures"


def test_movingai_map_fixture():
    grid = M.load_movingai_map(FIXTURES / "tiny.map")
    assert grid.shape == (6, 8)
    # '@', 'O', 'T', 'W' are obstacles; '.' and 'G' are free.
    assert grid[1, 1] and grid[1, 2] and grid[1, 5] and grid[4, 0] and grid[5, 5]
    assert not grid[3, 4] and not grid[0, 0]
    assert int(grid.sum()) == 3 + 2 + 3 + 2


def test_movingai_scen_fixture_is_row_col():
    tasks = M.load_movingai_scen(FIXTURES / "tiny.scen")
    assert [t.start for t in tasks] == [(0, 0), (0, 7), (4, 3)]
    assert [t.goal for t in tasks] == [(5, 7), (3, 0), (1, 4)]
    assert tasks[2].bucket == 1 and tasks[0].map_name == "tiny.map" and tasks[0].octile_length == 12.0
    grid = M.load_movingai_map(FIXTURES / "tiny.map")
    # 4-connected length, recomputed (the file's length is octile): (0,0)->(5,7) is 12 here.
    assert M.bfs_distance_host(grid, tasks[0].start)[tasks[0].goal] == 12


@pytest.mark.parametrize(
    "text, match",
    [
        ("type octile\nheight 2\nwidth 2\n", "no 'map' line"),
        ("type octile\nheight 2\nwidth 2\n..\n..\n", "line 4: expected a header line"),
        ("type octile\nheight x\nwidth 2\nmap\n..\n..\n", "must be integers"),
        ("type octile\nwidth 2\nmap\n..\n..\n", "no 'height'"),
        ("type octile\nheight 3\nwidth 2\nmap\n..\n..\n", "height 3 but 2 map rows"),
        ("type octile\nheight 2\nwidth 2\nmap\n..\n...\n", "line 6: row has 3 cells"),
        ("type octile\nheight 2\nwidth 2\nmap\n..\n.x\n", r"line 6, column 2: unknown terrain 'x'"),
        ("kind octile\nheight 2\nwidth 2\nmap\n..\n..\n", "line 1: expected a header"),
    ],
)
def test_malformed_movingai_map_names_the_problem(text, match):
    with pytest.raises(M.MapFormatError, match=match):
        M.parse_movingai_map(text, source="bad.map")


def test_malformed_scen_names_file_and_line(tmp_path):
    path = tmp_path / "bad.scen"
    path.write_text("version 1\n0\tm.map\t4\t4\t0\t0\t3\t3\t6\n0\tm.map\t4\t4\t0\t0\t9\t3\t6\n")
    with pytest.raises(M.MapFormatError, match=r"bad.scen: line 3: goal_x=9 is outside"):
        M.load_movingai_scen(path)
    with pytest.raises(M.MapFormatError, match="line 2: expected 9 fields"):
        M.parse_movingai_scen("version 1\n0 m.map 4 4 0 0 3\n")
    with pytest.raises(M.MapFormatError, match="version 1"):
        M.parse_movingai_scen("0 m.map 4 4 0 0 3 3 6\n")


def test_files_with_a_utf8_bom_load_like_plain_ones(tmp_path):
    for name, load in (("tiny.map", M.load_movingai_map), ("tiny.scen", M.load_movingai_scen)):
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + (FIXTURES / name).read_bytes())
        plain, bom = load(FIXTURES / name), load(path)
        if isinstance(plain, np.ndarray):
            np.testing.assert_array_equal(bom, plain)
        else:
            assert bom == plain
    # Text decoded elsewhere with plain "utf-8" keeps the mark as U+FEFF; parsers drop it too.
    text = (FIXTURES / "tiny.map").read_text(encoding="utf-8")
    np.testing.assert_array_equal(M.parse_movingai_map("\ufeff" + text), M.parse_movingai_map(text))
    assert M.parse_ascii_map("\ufeff.a\n#A").starts.tolist() == [[0, 1]]


def test_invalid_utf8_names_the_file_and_byte_offset(tmp_path):
    path = tmp_path / "latin1.map"
    data = b"type octile\nheight 1\nwidth 2\nmap\n.\xe9\n"  # a Latin-1 'é'
    path.write_bytes(data)
    assert data.index(b"\xe9") == 34
    with pytest.raises(M.MapFormatError, match=r"latin1\.map: not valid UTF-8 text at byte offset 34"):
        M.load_movingai_map(path)
    scen = tmp_path / "bom_then_bad.scen"
    scen.write_bytes(b"\xef\xbb\xbfversion 1\n\xff")  # offsets count the BOM: 0xFF is byte 13
    with pytest.raises(M.MapFormatError, match=r"bom_then_bad\.scen: not valid UTF-8 text at byte offset 13"):
        M.load_movingai_scen(scen)


def test_ascii_map_with_agents_and_targets():
    parsed = M.parse_ascii_map(
        """
        .a..#
        .#B.#
        b...A
        """
    )
    assert parsed.obstacles.shape == (3, 5)
    assert parsed.obstacles[0, 4] and parsed.obstacles[1, 1] and not parsed.obstacles[2, 0]
    np.testing.assert_array_equal(parsed.starts, [[0, 1], [2, 0]])
    np.testing.assert_array_equal(parsed.goals, [[2, 4], [1, 2]])
    assert M.parse_ascii_map("..\n#.").starts is None
    assert M.map_to_ascii(parsed.obstacles).splitlines()[1] == ".#..#"


@pytest.mark.parametrize(
    "text, match",
    [
        ("...\n..", "row 2 has 2 cells"),
        ("..?\n...", r"row 1, column 3: unknown character '\?'"),
        ("a..\n...", r"agents \['a'\] and targets \[\] do not match"),
        ("aa.\nA..", "letter 'a' appears twice"),
        ("", "empty"),
    ],
)
def test_malformed_ascii_map(text, match):
    with pytest.raises(M.MapFormatError, match=match):
        M.parse_ascii_map(text)


def _connected(obstacles: np.ndarray) -> bool:
    labels = M.components(obstacles)
    return labels.max() == 1


@pytest.mark.parametrize("size", [(10, 13)])
def test_maze_is_a_perfect_maze(size):
    mazes = np.asarray(
        jax.jit(jax.vmap(lambda k: M.maze_map(k, *size)))(jax.random.split(jax.random.key(0), 8))
    )
    assert len({m.tobytes() for m in mazes}) > 1, "mazes should differ between keys"
    for m in mazes:
        assert _connected(m)
        free = ~m
        # A spanning tree: free cells - 1 == passages between 4-neighbours.
        edges = (free[1:] & free[:-1]).sum() + (free[:, 1:] & free[:, :-1]).sum()
        assert edges == free.sum() - 1


def test_warehouse_map_layout():
    w = M.warehouse_map(shelf_rows=2, shelf_cols=3, shelf_length=4, corridor=1, margin=2)
    assert w.shape == (2 * 2 + 2 + 1, 2 * 2 + 3 * 4 + 2)
    assert int(w.sum()) == 2 * 3 * 4
    assert w[2, 2:6].all() and not w[2, 6] and w[2, 7:11].all()
    assert _connected(w)
    with pytest.raises(ValueError, match="shelf_length must be >= 1"):
        M.warehouse_map(shelf_length=0)


def test_largest_component_matches_host_labels():
    keys = jax.random.split(jax.random.key(3), 6)
    obst = np.asarray(jax.vmap(lambda k: M.random_map(k, 12, 12, 0.4))(keys))
    got = np.asarray(jax.jit(jax.vmap(G.largest_component))(~obst))
    for o, mask in zip(obst, got, strict=True):
        labels = M.components(o)
        sizes = np.bincount(labels.ravel())[1:]
        assert mask.sum() == sizes.max()
        assert len(np.unique(labels[mask])) == 1


def test_bfs_distances_match_host_bfs():
    obst = M.load_movingai_map(FIXTURES / "tiny.map")
    sources = np.array([[0, 0], [3, 4], [5, 7]])
    got = np.asarray(jax.jit(G.bfs_distances)(~obst, sources))
    for s, d in zip(sources, got, strict=True):
        want = M.bfs_distance_host(obst, tuple(s))
        np.testing.assert_array_equal(np.where(want < 0, G.INF, want), d)
