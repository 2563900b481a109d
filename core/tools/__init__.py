"""Tools built on the scenarios and the engine: the fuzzer, real worker processes, the CLI."""
