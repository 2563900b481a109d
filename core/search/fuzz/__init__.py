"""The fuzzer (`borrowed-keys chaos`): `generate` plays one seeded random fault schedule,
`replay` plays a schedule again, `shrink` cuts it to the fewest actions that still fail,
`write` turns it into a reproducer file, `report` totals the runs, and `pool` runs many,
in one process or several."""
