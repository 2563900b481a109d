"""The simulation: agent workers on a virtual clock, faults, mistake modes, a safety checker."""
