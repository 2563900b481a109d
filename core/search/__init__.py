"""The searches over the simulation: the explorer (every interleaving of a small world,
breadth first) and the fuzzer (seeded random fault schedules, shrunk). Both hand back
scenario files, so they sit above the scenarios and below the app and the tools."""
