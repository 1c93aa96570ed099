"""What the CLI prints for people: tables fit by cutting ids in the middle, never an
outcome; code is never cut."""

from __future__ import annotations

from curator.cli.context import middle_ellipsis, rich_table


def test_middle_ellipsis_keeps_both_ends():
    assert middle_ellipsis("gru_teacher_forcing_step", 12) == "gru_te…_step"
    assert middle_ellipsis("short", 12) == "short"


def test_tables_fit_100_columns_cutting_ids_not_outcomes(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    rows = [["train_epoch_grad_accumulation_with_a_very_long_suffix_0123456789", "m" * 30,
             "zero-shot", "response", "timeout"],
            ["x", "m", "t", "e", "passed"]]
    rich_table(["problem", "model", "technique", "extraction", "outcome"], rows)
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 100
    body = "\n".join(lines)
    assert "timeout" in body and "passed" in body
    assert "train_epoch" in body and "…" in body and "0123456789" in body
