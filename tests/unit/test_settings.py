"""Run options are declared once: the CLI, the TUI, the repro line and the
options table in docs/cli.md are all made from dlcprof.settings.OPTIONS."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from helpers.paths import REPO

from dlcprof.cli.parser import build_parser, settings_from
from dlcprof.settings import OPTIONS, RunSettings, SettingsError, markdown_table, repro_command
from dlcprof.tui.widgets.settings_panel import CHOICES, TOGGLES

CLI_DOC = REPO / "docs" / "cli.md"


def test_the_options_table_is_made_from_the_options():
    text = CLI_DOC.read_text()
    block = text.split("<!-- options:begin -->\n", 1)[1].split("\n<!-- options:end -->", 1)[0]
    assert block == markdown_table(), "docs/cli.md options table is stale: paste markdown_table()"


def test_every_option_is_a_cli_flag_with_its_help():
    commands: Any = build_parser()._subparsers._group_actions[0]  # argparse's subparsers
    help_text = commands.choices["run"].format_help()
    for o in OPTIONS:
        assert o.flag in help_text


def test_tui_selects_and_checkboxes_are_the_tui_options():
    assert CHOICES == {o.name: o.choices for o in OPTIONS if o.tui and o.kind == "choice"}
    assert TOGGLES == ("freezing",)


def test_repro_command_parses_back_into_the_same_settings():
    s = RunSettings(
        target="pointwise-chain",
        mode="max-autotune",
        dynamic="false",
        threads=1,
        iters=3,
        reps=2,
        shapes=[4, 8],
        benchmark=False,
        freezing=True,
        hotspots=False,
    ).validate()
    argv = shlex.split(repro_command(s))
    assert argv[:3] == ["dlcprof", "run", "pointwise-chain"]
    args = build_parser().parse_args(argv[1:])
    assert settings_from(args, args.target) == s


@pytest.mark.parametrize(
    ("field", "value", "expect"),
    [
        ("mode", "fast", "invalid --mode 'fast': choose one of default, reduce-overhead"),
        ("threads", 0, "invalid --threads 0: give a whole number >= 1"),
    ],
)
def test_bad_values_are_one_line_naming_the_flag(field, value, expect):
    with pytest.raises(SettingsError) as e:
        RunSettings(target="x", **{field: value}).validate()
    assert str(e.value).startswith(expect) and "\n" not in str(e.value)
    if field == "mode":
        assert str(e.value).endswith("max-autotune-no-cudagraphs (or all)")


def test_mode_all_is_one_run_per_mode_in_the_cli_and_no_tui_mode(capsys):
    from dlcprof.cli import main
    from dlcprof.cli.parser import run_queue
    from dlcprof.settings import MODES

    args = build_parser().parse_args(["run", "gelu-mlp", "--mode", "all", "--freezing"])
    runs = run_queue(args)
    assert [r.mode for r in runs] == list(MODES)
    assert all(r.freezing and r.target == "gelu-mlp" for r in runs)
    # The TUI runs every mode with a key, not a flag; modes are Inductor's: one line, exit 2.
    assert main(["tui", "gelu-mlp", "--mode", "all"]) == 2
    assert "press a" in capsys.readouterr().err
    assert main(["run", "gelu-mlp", "--mode", "all", "--backend", "eager"]) == 2
    assert "backend eager has none" in capsys.readouterr().err
