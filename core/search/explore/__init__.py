"""The explorer: `bfs` walks the world level by level, `pool` expands a level in one
process or several, `branch` moves a simulation from state to state, `canonical` says
which states count as one, `world` holds the choices and the seed's rules, and `story`
writes a shortest counterexample as a scenario file."""

# Here, not with the world: the command line's help names it without loading the search.
DEFAULT_DEPTH = 6  # deep enough for every mode's shortest trace in the default world (5)
