"""One name for a component's option on every command that takes --set: `sut.url` and
`sut.options.url` both reach the option, on a hand-written use case and on a run's saved
configuration (whose options are nested)."""

from __future__ import annotations

import pytest
from test_new_user_path import bot, stellar, url


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A use case written by `stellar init` and a 5-test run of it: (folder, run dir, URL)."""
    where = tmp_path_factory.mktemp("names")
    server = bot(tolerant=True)
    stellar("init", "faq", "--url", url(server), "--yes", "--no-smoke", cwd=where)
    stellar("run", "faq", "--tests", "5", "--out", "runs", "--quiet", cwd=where)
    [run] = (where / "runs").glob("faq-*")
    yield where, run, url(server)
    server.shutdown()


@pytest.mark.parametrize("key", ["sut.url", "sut.options.url"])
@pytest.mark.parametrize("command", ["run", "preview", "replay"])
def test_both_names_of_an_option_work_on_every_command(saved, command, key):
    where, run, address = saved
    setting = f"{key}={address}"
    if command == "run":  # the saved configuration, nested, as a user reruns it
        stellar("run", run / "config.yaml", "--dry-run", "--set", setting, cwd=where)
        stellar("run", "faq", "--dry-run", "--set", setting, cwd=where)  # inline
    elif command == "preview":
        stellar("preview", run / "config.yaml", "-n", "2", "--set", setting, cwd=where)
        stellar("preview", "faq", "-n", "2", "--set", setting, cwd=where)
    else:
        done = stellar("replay", run, "--set", setting, cwd=where, check=None)
        assert done.returncode in (0, 1), done.stderr
