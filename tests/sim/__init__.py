"""The simulation: workers, faults, modes, the keeper's watch, the books, the timeline and the
safety checker."""
