"""The live pacer: wall time to virtual time at a chosen multiple; the sim never reads the wall."""

from core.sim.live import SPEEDS, LivePacer


def test_paused_pacer_lets_no_time_pass() -> None:
    pacer = LivePacer(speed=10.0, paused=True)
    assert pacer.tick(100.0) == 0
    assert pacer.tick(101.0) == 0


def test_running_pacer_converts_wall_seconds_at_its_speed_and_keeps_fractions() -> None:
    pacer = LivePacer(speed=10.0, paused=False)
    assert pacer.tick(100.0) == 0  # the first tick only sets the reference
    assert pacer.tick(100.25) == 2_500
    slow = LivePacer(speed=0.25, paused=False)
    slow.tick(0.0)
    total = sum(slow.tick(i * 0.001) for i in range(1, 1001))
    assert total == 250  # 1 s of wall time at x0.25, no millisecond lost to rounding


def test_speed_steps_through_the_ladder_and_stops_at_its_ends() -> None:
    pacer = LivePacer(speed=SPEEDS[-2])
    assert pacer.faster() == SPEEDS[-1]
    assert pacer.faster() == SPEEDS[-1]
    pacer = LivePacer(speed=SPEEDS[1])
    assert pacer.slower() == SPEEDS[0]
    assert pacer.slower() == SPEEDS[0]
