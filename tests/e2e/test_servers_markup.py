"""Paths and names are text, never Rich markup: `servers` and `list` titles with brackets."""

from __future__ import annotations

from pathlib import Path

from conftest import RunCli


def test_a_config_path_with_brackets_is_shown_as_written(run_cli: RunCli, tmp_path: Path) -> None:
    folder = tmp_path / "x[/y]"
    folder.mkdir(parents=True)
    config = folder / "c.toml"
    config.write_text('[servers.a]\nurl = "http://h.test/mcp"\n')
    r = run_cli("servers", "--config", str(config), "-o", "pretty")
    assert r.code == 0, r.stderr
    assert "x[/y]" in r.stdout and "http://h.test/mcp" in r.stdout
