"""The ``stellar`` command line: one module per command, output helpers apart."""

from stellar.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
