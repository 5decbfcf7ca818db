"""One page's sections and its one refresh path.

A page (02's storyboard with its cast and films, 01, 03) is several sections that show the same
database. Every action on the page goes through `Page.act`: the action runs, its message shows
where it was asked for, then every section of the page redraws from the database. So after a
split, an approval or a rejection no section shows an older state than another, and no section
needs its own *Look again* (those buttons redraw the whole page too, for what workers made).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from pipeline_kit.ui.actions import Said
from pipeline_kit.ui.widgets import Message


class Section(Protocol):
    """A part of a page that can show what the database holds now."""

    def redraw(self) -> object: ...


S = TypeVar("S", bound=Section)
R = TypeVar("R", bound=Said)


class Page:
    """The sections of one page, redrawn together after every action taken on any of them."""

    def __init__(self, *sections: Section) -> None:
        self.sections: list[Section] = list(sections)

    def add(self, section: S) -> S:
        """Show `section` on this page: it is redrawn after every action from now on."""
        self.sections.append(section)
        return section

    def act(self, action: Callable[[], R], message: Message) -> R:
        """Do one action, say what it did on `message`, then redraw every section."""
        result = action()
        message.show(result)
        self.redraw()
        return result

    def redraw(self) -> None:
        """Every section shows what the database holds now."""
        for section in self.sections:
            section.redraw()
