"""Errors that are the user's to fix: the command line prints them in one line, exit code 2."""


class StellarError(Exception):
    """A problem with the user's input (configuration, feature file, run directory)."""


class Terminated(StellarError):
    """SIGTERM stopped the command after its tests in flight; exit code 143 (128 + 15)."""

    exit_code = 143


class ConfigError(StellarError):
    """A malformed configuration or feature file: names the file, the path and the problem."""

    def __init__(self, source: object, path: str, problem: str) -> None:
        where = f"{source}: {path}" if path else f"{source}"
        super().__init__(f"{where}: {problem}")
        self.source, self.path, self.problem = source, path, problem

    def __reduce__(self) -> tuple:  # picklable, so that worker processes can report it
        return (type(self), (self.source, self.path, self.problem))


def plugin_fault(exc: Exception) -> str:
    """A plugin's refusal in one line: its message, with the type unless it is a value check."""
    return str(exc) if isinstance(exc, ValueError | TypeError) else f"{type(exc).__name__}: {exc}"


class ModelError(StellarError):
    """A model call failed after its retries (rate limits, server errors, timeouts)."""


class ModelAccessError(ModelError):
    """The endpoint refused the key or does not know the model: no later call can succeed."""


class MemoryProbeFailed(StellarError):
    """The system under test did not remember a fact a turn later: conversations would test
    nothing (exit code 3, as for a run whose system fails)."""

    exit_code = 3
