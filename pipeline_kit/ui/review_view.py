"""The storyboard's *Review frames* panel: the review switch, what waits and the last decisions,
the frame under review large beside its shot's text and prompt, previous and next, approve and
reject with a note. The list is in the book's order, each frame named as its card names the shot.
Every decision goes through the page (`Page.act`), so the whole page shows it at once."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

import ipywidgets as w

from pipeline_kit.text.graph import FRAMES
from pipeline_kit.ui.actions import ActionResult
from pipeline_kit.ui.page import Page
from pipeline_kit.ui.review import ReviewCounts, ReviewFrame, ReviewModel
from pipeline_kit.ui.widgets import Message, options, picture
from pipeline_kit.ui.words import describe_task, state_in_words

LARGE = 640  # the width of the frame under review


class ReviewPanel:
    """Review one frame at a time, in the book's order."""

    def __init__(self, model: ReviewModel, page: Page, message: Message) -> None:
        self.model, self.page, self.message = model, page, message
        self._drawing = False  # True while redraw sets values: those are not a person's choices
        self.review = w.Checkbox(description="Review frames before their clip is made", indent=False)
        self.line = w.HTML()
        self.waiting = w.Dropdown(description="Frame", layout=w.Layout(width="600px"))
        self.prev_frame = w.Button(description="◀ Previous frame", layout=w.Layout(width="auto"))
        self.next_frame = w.Button(description="Next frame ▶", layout=w.Layout(width="auto"))
        self.position = w.HTML()
        self.large = w.Box(layout=w.Layout(min_width=f"{LARGE}px"))
        self.frame_info = w.HTML(layout=w.Layout(max_width="520px", margin="0 0 0 12px"))
        self.note = w.Text(
            description="Note", placeholder="what to change (needed to reject)", layout=w.Layout(width="600px")
        )
        self.approve = w.Button(description="Approve", icon="check", button_style="success")
        self.reject = w.Button(description="Reject", icon="times", button_style="danger")
        self.approve.add_class("pk-approve")
        self.reject.add_class("pk-reject")
        self.review.observe(
            lambda change: self._drawing or self.run(lambda: self.model.set_review(change["new"])), names="value"
        )
        self.waiting.observe(lambda _: self._drawing or self.show_waiting(), names="value")
        self.prev_frame.on_click(lambda _: self.step(-1))
        self.next_frame.on_click(lambda _: self.step(1))
        self.approve.on_click(
            lambda _: self.waiting.value and self.decide(lambda: self.model.approve(self.waiting.value))
        )
        self.reject.on_click(lambda _: self.reject_selected())
        self.widget = w.VBox(
            [
                self.review,
                self.line,
                self.waiting,
                w.HBox([self.prev_frame, self.position, self.next_frame]),
                w.HBox([self.large, self.frame_info]),
                self.note,
                w.HBox([self.approve, self.reject]),
            ]
        )

    def redraw(self) -> None:
        """The switch, the counts and decisions, and the list of frames waiting (keeping the one
        shown while it still waits)."""
        self._drawing = True
        try:
            self.review.value = self.model.review_on()
            options(self.waiting, [(r.label, r.task_id) for r in self.model.awaiting(kinds=FRAMES)])
        finally:
            self._drawing = False
        self.line.value = review_html(self.model.counts())
        self.show_waiting()

    def run(self, action: Callable[[], ActionResult]) -> ActionResult:
        return self.page.act(action, self.message)

    def decide(self, action: Callable[[], ActionResult]) -> ActionResult:
        """Approve or reject the frame under review, then show the one that came after it."""
        at = self._index()
        result = self.run(action)
        if result.ok and self.waiting.options:
            self.waiting.value = self.waiting.options[min(at, len(self.waiting.options) - 1)][1]
        return result

    def reject_selected(self) -> ActionResult | None:
        """Reject the frame under review with the note; the note box clears once the note is taken."""
        if not self.waiting.value:
            return None
        task_id, note = self.waiting.value, self.note.value
        result = self.decide(lambda: self.model.reject(task_id, note))
        if result.ok:
            self.note.value = ""
        return result

    def step(self, by: int) -> None:
        """Move to the previous (-1) or next (+1) frame waiting for review."""
        choices = self.waiting.options
        if choices:
            self.waiting.value = choices[max(0, min(self._index() + by, len(choices) - 1))][1]

    def _index(self) -> int:
        values = [v for _, v in self.waiting.options]
        return values.index(self.waiting.value) if self.waiting.value in values else 0

    def show_waiting(self) -> None:
        """The frame under review large, beside its shot's text and the prompt it was drawn from."""
        count, at = len(self.waiting.options), self._index()
        self.prev_frame.disabled, self.next_frame.disabled = at <= 0, at >= count - 1
        item = self.model.frame(self.waiting.value) if self.waiting.value else None
        if item is None:
            self.position.value = "&nbsp;no frame waits for your review&nbsp;" if not count else ""
            self.large.children, self.frame_info.value = (), ""
            return
        self.position.value = f"&nbsp;<span data-pk='review-position'>frame {at + 1} of {count}</span>&nbsp;"
        media = item.media
        shown = picture(Path(media.path), media.mime, LARGE) if media.ready and media.path and media.mime else None
        caption = w.HTML(
            f"<small>{html.escape(media.kind.replace('_', ' '))}: "
            f"{html.escape(state_in_words(media.status, media.kind))}</small>"
        )
        self.large.children = (w.VBox([shown, caption] if shown else [caption]),)
        self.frame_info.value = frame_html(item)


def frame_html(item: ReviewFrame) -> str:
    """What a frame under review is judged against: which shot, its source text, the prompt."""
    return (
        f"<div data-pk='review-frame'><b>{html.escape(describe_task(item.task_id))}</b>"
        + (f" · {html.escape(item.where)}" if item.where else "")
        + f"<p data-pk='review-text'><b>Source text</b><br>{html.escape(item.text)}</p>"
        f"<p data-pk='review-prompt' style='white-space:pre-wrap'><b>Prompt</b><br>{html.escape(item.prompt)}</p>"
        "</div>"
    )


def review_html(counts: ReviewCounts) -> str:
    """What waits for review, then the last decisions (who, when, the note)."""
    lines = [f"<p data-pk='review-count'><b>{html.escape(counts.line())}</b></p>"]
    lines += [
        f"<div data-pk='decision'><small>{d.at:%Y-%m-%d %H:%M} UTC · "
        f"{'approved' if d.decision == 'approve' else 'rejected'} "
        f"{html.escape(describe_task(d.task_id))} "
        f"by {html.escape(d.by or '?')}" + (f": “{html.escape(d.note)}”" if d.note else "") + "</small></div>"
        for d in counts.decisions
    ]
    return "".join(lines)
