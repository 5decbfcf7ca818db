"""The admin screen's widgets: a thin layout over `MonitorModel` snapshots and its buttons.

Rows with buttons (lanes, failed and blocked tasks) are kept per key between refreshes and only
their text changes, so a click is never lost to a redraw. Pictures and films (fetched through the
store by the model) are kept per file too: a refresh sends an image or a film to the page once.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import TypeVar

import ipywidgets as w

from pipeline_kit.engine.registry import Liveness
from pipeline_kit.engine.states import Status
from pipeline_kit.ui.actions import ActionResult
from pipeline_kit.ui.film_view import film_widget
from pipeline_kit.ui.live import Refresher
from pipeline_kit.ui.monitor import LaneRow, MonitorModel, MonitorSnapshot, OutputRow, ProblemRow
from pipeline_kit.ui.page import Page
from pipeline_kit.ui.words import describe_task
from pipeline_kit.ui.widgets import STYLE, Message, Styled, ages, heading, reuse, table
from pipeline_kit.plural import plural

Row = TypeVar("Row")
STATUSES = [s.value for s in Status]


class MonitorScreen:
    """Counts, throughput, lanes, workers, expiring leases and problems, refreshed in the background."""

    def __init__(self, model: MonitorModel, *, refresh_s: float = 5.0) -> None:
        self.model = model
        self.page = Page(self)  # the monitor is a page of its own: every action redraws it
        self.message = Message()
        self.clock = w.HTML()
        self.toggle = w.Button(description="Stop auto-refresh", icon="pause")
        self.toggle.on_click(lambda _: self._toggle())
        self.refresh_button = w.Button(description="Refresh now", icon="refresh")
        self.refresh_button.on_click(lambda _: self.page.redraw())
        self.fold = w.ToggleButton(value=model.show_all, icon="eye", description="Show workers not seen for a day")
        self.fold.observe(lambda change: self._show_all(bool(change["new"])), names="value")
        self.folded = w.HTML()
        self.down = w.HTML()  # providers workers find down, one red line each
        self.counts, self.throughput = w.HTML(), w.HTML()
        self.lanes, self.problems = w.VBox(), w.VBox()
        self.workers, self.expiring = w.HTML(), w.HTML()
        self.review = w.HTML()
        self.latest = w.HBox(layout=w.Layout(flex_flow="row wrap"))
        self.films = w.VBox()
        self.spend = w.HTML()
        self._rows: dict[Hashable, w.HBox] = {}
        self._pictures: dict[Hashable, w.Widget] = {}
        self._films: dict[Hashable, w.Widget] = {}
        self.live: Refresher[MonitorSnapshot] = Refresher(
            model.snapshot, self.show, every_s=refresh_s, on_error=self.message.error
        )
        self.widget = w.VBox(
            [
                w.HTML(STYLE),
                w.HBox([self.toggle, self.refresh_button, self.clock]),
                self.message.widget,
                heading("Tasks by status"),
                self.counts,
                self.throughput,
                heading("Review"),
                self.review,
                heading("Made lately"),
                self.latest,
                heading("Films"),
                self.films,
                heading("Spend per provider"),
                self.spend,
                heading("Lanes"),
                self.lanes,
                heading("Workers"),
                self.workers,
                w.HBox([self.fold, self.folded]),
                self.down,
                heading("Leases about to expire"),
                self.expiring,
                heading("Failed and blocked tasks"),
                self.problems,
            ]
        )
        self._label()

    def start(self) -> bool:
        """Refresh in the background (needs a running event loop: a notebook or Voilà)."""
        started = self.live.start()
        self._label()
        return started

    def stop(self) -> None:
        self.live.stop()
        self._label()

    def redraw(self) -> None:
        """Read a snapshot (off the kernel's event loop when one runs) and show it."""
        self.live.refresh()

    def refresh_now(self) -> MonitorSnapshot:
        """Read and show one snapshot synchronously (a notebook's first draw, a test)."""
        snap = self.model.snapshot()
        self.show(snap)
        return snap

    def show(self, snap: MonitorSnapshot) -> None:
        when = snap.db_time.strftime("%Y-%m-%d %H:%M:%S") if snap.db_time else "?"
        scope = f"book {html.escape(self.model.bookcode)}" if self.model.bookcode else "all books"
        self.clock.value = (
            f"&nbsp;<span data-pk='database'>{html.escape(snap.database)}</span> · "
            f"{scope} · database time <span data-pk='db-time'>{when}</span> UTC · "
            f"{snap.open} open of {snap.total}"
        )
        self.counts.value = _counts(snap)
        t = snap.throughput
        closed = ", ".join(f"{n} {k}" for k, n in sorted(t.outcomes.items())) or "nothing"
        self.throughput.value = (
            f"<p data-pk='throughput'>Last {t.window_s / 60:g} min: <b>{t.completed}</b> completed "
            f"(<b>{t.per_minute:g}/min</b>); attempts closed: {html.escape(closed)} · "
            f"last hour: {t.completed_last_hour} completed</p>"
        )
        self.review.value = _review(snap)
        self._pictures = reuse(self._pictures, [((p.task_id, p.path), p) for p in snap.latest if p.ready], _picture)
        self.latest.children = tuple(self._pictures.values()) or (w.HTML("<i>no frame drawn yet</i>"),)
        self._films = reuse(self._films, [((f.task_id, f.path), f) for f in snap.films if f.ready], film_widget)
        self.films.children = tuple(self._films.values()) or (w.HTML("<i>no film made yet</i>"),)
        self.spend.value = _spend(snap)
        self.lanes.children = self._keep(snap.lanes, lambda r: ("lane", r.lane), self._lane_row, self._lane_update)
        self.workers.value = table(
            ["worker", "host", "state", "current task", "stage", "heartbeat age", "last seen", "done"],
            [
                (
                    r.worker_id,
                    r.host,
                    _state(r.state),
                    r.task_id + (f" (+{r.running - 1})" if r.running > 1 else "") if r.task_id else "",
                    r.stage,
                    ages(r.heartbeat_age_s),
                    ages(r.last_seen_age_s),
                    r.completed,
                )
                for r in snap.workers
            ],
            key="workers",
            empty="no worker seen for a day" if snap.folded_workers else "no worker has registered",
        )
        folded = snap.folded_workers and not self.model.show_all
        self.folded.value = (
            f"<span data-pk='folded'>&nbsp;{plural(snap.folded_workers, 'worker')} "
            "not seen for a day folded away</span>"
            if folded
            else ""
        )
        self.down.value = "".join(
            f"<div class='pk-bad' data-pk='down'>{html.escape(line)}</div>" for line in snap.providers_down
        )
        self.expiring.value = table(
            ["task", "worker", "lease left"],
            [(r.task_id, r.worker_id, ages(r.lease_left_s)) for r in snap.expiring],
            key="expiring",
            empty=f"no lease ends within {self.model.expiring_within_s:g} s",
        )
        problems = (*snap.failed, *snap.blocked)
        self.problems.children = self._keep(
            problems, lambda p: ("task", p.task_id), self._problem_row, self._problem_update
        ) or (w.HTML("<i>none</i>"),)

    # -- rows with buttons ---------------------------------------------------------------------
    def _keep(
        self,
        items: Sequence[Row],
        key: Callable[[Row], Hashable],
        make: Callable[[Row], w.HBox],
        update: Callable[[w.HBox, Row], None],
    ) -> tuple[w.HBox, ...]:
        """The rows for `items`: a row made once per key, then only updated."""
        rows = []
        for item in items:
            k = key(item)
            row = self._rows.get(k)
            if row is None:
                row = self._rows[k] = make(item)
            update(row, item)
            rows.append(row)
        return tuple(rows)

    def _lane_row(self, lane: LaneRow) -> w.HBox:
        pause = w.Button(description="Pause", icon="pause", layout=w.Layout(width="90px"))
        resume = w.Button(description="Resume", icon="play", layout=w.Layout(width="90px"))
        pause.on_click(lambda _: self._act(lambda: self.model.pause(lane.lane)))
        resume.on_click(lambda _: self._act(lambda: self.model.resume(lane.lane)))
        row = w.HBox([w.HTML(layout=w.Layout(width="560px")), pause, resume])
        row.add_class("pk-lane")
        return row

    def _lane_update(self, row: w.HBox, lane: LaneRow) -> None:
        text, pause, resume = row.children
        text.value = self._lane_text(lane)
        pause.disabled, resume.disabled = lane.paused, not lane.paused

    def _lane_text(self, lane: LaneRow) -> str:
        counts = ", ".join(f"{n} {s}" for s, n in sorted(lane.counts.items())) or "no tasks"
        limit = "no limit" if lane.max_running is None else f"max {lane.max_running} running"
        state = "<b class='pk-bad'>paused</b>" if lane.paused else "active"
        return (
            f"<span data-pk='lane-{html.escape(lane.lane)}'><b>{html.escape(lane.lane)}</b> · {state} · "
            f"{limit} · {html.escape(counts)}</span>"
        )

    def _problem_row(self, p: ProblemRow) -> w.HBox:
        buttons = []
        if p.status == Status.FAILED.value:
            retry = w.Button(
                description="Retry", icon="redo", tooltip=f"retry {p.task_id}", layout=w.Layout(width="90px")
            )
            retry.on_click(lambda _: self._act(lambda: self.model.retry(p.task_id)))
            buttons.append(retry)
        cancel = w.Button(
            description="Cancel", icon="times", tooltip=f"cancel {p.task_id}", layout=w.Layout(width="90px")
        )
        cancel.on_click(lambda _: self._act(lambda: self.model.cancel(p.task_id)))
        row = w.HBox([w.HTML(layout=w.Layout(width="560px")), *buttons, cancel])
        row.add_class("pk-problem")
        return row

    def _problem_update(self, row: w.HBox, p: ProblemRow) -> None:
        row.children[0].value = (
            f"<span data-pk='problem' title='{html.escape(p.next_action)}'><b>{html.escape(p.task_id)}</b> "
            f"({html.escape(p.status)}, lane {html.escape(p.lane)}): {html.escape(p.detail[:300])}</span>"
        )

    # -- actions -------------------------------------------------------------------------------
    def _act(self, action: Callable[[], ActionResult]) -> ActionResult:
        return self.page.act(action, self.message)

    def _show_all(self, show: bool) -> None:
        """The fold toggle: list the workers not seen for a day too (or fold them again)."""
        self.model.show_all = show
        self.page.redraw()

    def _toggle(self) -> None:
        if self.live.running:
            self.stop()
        else:
            self.start()

    def _label(self) -> None:
        running = self.live.running
        self.toggle.description = "Stop auto-refresh" if running else "Start auto-refresh"
        self.toggle.icon = "pause" if running else "play"


def _state(state: str | None) -> Styled | str | None:
    """A worker's state, in red when it does not respond or waits on a provider or the store."""
    stuck = state == Liveness.NOT_RESPONDING.value or (state or "").startswith(Liveness.PAUSED.value)
    return Styled(state, "pk-bad") if stuck and state else state


def _counts(snap: MonitorSnapshot) -> str:
    statuses = [s for s in STATUSES if snap.counts.get(s, 0) or s in ("pending", "processing", "completed", "failed")]
    head = "".join(f"<th>{s.replace('_', ' ')}</th>" for s in statuses)
    cells = "".join(f"<td data-pk='count-{s}'>{snap.counts.get(s, 0)}</td>" for s in statuses)
    return (
        f"<table class='pk-table' data-pk='counts'><tr><th>all</th>{head}</tr>"
        f"<tr><td data-pk='count-total'>{snap.total}</td>{cells}</tr></table>"
    )


def _review(snap: MonitorSnapshot) -> str:
    """How many frames wait for a person, and the last decisions in words."""
    waiting = (
        f"<p data-pk='review-waiting'><b>{snap.awaiting_review}</b> "
        f"{'frame' if snap.awaiting_review == 1 else 'frames'} wait for your "
        "review (in 02_storyboard)</p>"
        if snap.awaiting_review
        else "<p data-pk='review-waiting'>nothing waits for review</p>"
    )
    return waiting + table(
        ["when (UTC)", "decision", "frame", "by", "note"],
        [
            (
                f"{d.at:%Y-%m-%d %H:%M}",
                Styled("approved", "pk-ok") if d.decision == "approve" else Styled("rejected", "pk-bad"),
                d.task_id,
                d.by,
                d.note,
            )
            for d in snap.decisions
        ],
        key="decisions",
        empty="no frame approved or rejected yet",
    )


def _picture(out: OutputRow) -> w.Widget:
    """A frame or character sheet as a small picture, named in words."""
    path = Path(out.path or "")
    return w.VBox(
        [
            w.Image(value=path.read_bytes(), format=path.suffix.lstrip(".") or "png", width=160),
            w.HTML(f"<small data-pk='latest'>{html.escape(describe_task(out.task_id))}</small>"),
        ],
        layout=w.Layout(margin="0 8px 0 0"),
    )


def _spend(snap: MonitorSnapshot) -> str:
    """Money spent per provider: its paid attempts and their cost, costliest first."""
    return table(
        ["provider", "paid attempts", "spent"],
        [(provider, spent["attempts"], f"{spent['cost']:.2f}") for provider, spent in snap.spend.items()],
        key="spend",
        empty="nothing paid yet",
    )


def monitor_screen(model: MonitorModel, *, refresh_s: float = 5.0, auto: bool = True) -> MonitorScreen:
    """Build the screen, draw it once, and (when `auto` and a loop runs) keep it current."""
    screen = MonitorScreen(model, refresh_s=refresh_s)
    try:
        screen.refresh_now()
    except Exception as exc:  # still show the screen: the refresh loop keeps trying
        screen.message.error(f"first read failed: {exc}")
    if auto:
        screen.start()
    return screen
