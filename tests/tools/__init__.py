"""The headless command line: its commands, options and what each loads; the bench's figures."""
