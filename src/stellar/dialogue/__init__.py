"""Conversations as tests: a candidate compiles into a plan of turns (``plan``), a session
holds the conversation with the system under test (``session``), and the runner drives the
plan through it (``runner``)."""
