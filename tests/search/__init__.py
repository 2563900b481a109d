"""The searches: the explorer and the chaos fuzzer, and one judge for what they find."""
