"""The command line: its parser, each command's options and output, real worker processes."""
