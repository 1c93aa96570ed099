"""The Team tab's lines for the other two panels: problem label rounds and candidate votes.

Failure review's own agreement is the Team tab's first lines; these come from the same
agreement code (curator.review.agreement) through curator.panel.
"""

from __future__ import annotations

from textual.widgets import Static

from curator.labels import AXES
from curator.panel import candidates as candidate_panel
from curator.panel import rounds
from curator.store import Store
from curator.workspace import Workspace


def _num(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _kappas(summary: dict) -> str:
    values = [k for k in summary["kappa"].values() if k is not None]
    if not values:
        return "κ n/a"
    return f"κ {min(values):.2f}–{max(values):.2f}" if len(values) > 1 else f"κ {values[0]:.2f}"


def label_lines(store: Store) -> list[str]:
    data = rounds.stats(store)
    if not data["items"]:
        return ["Problem labels: no label round yet (curator labels assign)."]
    dims = " · ".join(f"{axis} α {_num(data['dimensions'][axis]['alpha'])} "
                      f"{_kappas(data['dimensions'][axis])}" for axis in AXES)
    progress = " · ".join(f"{name}: {p['done']}/{p['assigned']}"
                          for name, p in data["annotators"].items())
    return [f"Problem labels: {data['items']} problem(s) in label rounds, "
            f"{data['complete']} with every vote in · {dims} · votes done: "
            + (progress or "nobody assigned")]


def candidate_lines(store: Store, workspace: Workspace) -> list[str]:
    try:
        rule = candidate_panel.rule_for(workspace)
    except Exception as exc:   # noqa: BLE001 - a bad curator.toml is shown, not raised
        return [f"Candidates: {exc}"]
    data = candidate_panel.stats(store, rule)
    if not data["candidates"]:
        return [f"Candidates (rule {rule}): no panel votes yet (y / n on F4)."]
    d, agreement = data["decisions"], data["agreement"]
    return [f"Candidates (rule {rule}): {data['candidates']} before the panel, "
            f"{d['accepted']} accepted, {d['rejected']} rejected, {d['waiting']} waiting · "
            f"relevance α {_num(agreement['alpha'])} {_kappas(agreement)} on "
            f"{agreement['items']} with two or more votes"]


class PanelAgreement(Static):
    """Agreement of the label rounds and the candidate panel, under failure review's."""

    def show(self, store: Store, workspace: Workspace) -> None:
        self.update("\n".join(label_lines(store) + candidate_lines(store, workspace)))
