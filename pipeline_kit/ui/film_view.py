"""The film, shown and linked once made: the book's film and each chapter's, in 02 and 03.

Films are read through the output store (`Store.fetch` into this PC's cache), never by a path
the worker that assembled them saw, so the page plays them from any folder and any PC. A film
plays in the page and can be downloaded from it (below a size a browser copes with inline);
`pipeline-kit export` writes every film and its subtitles to a folder whatever the size.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from pathlib import Path

import ipywidgets as w

from pipeline_kit import kinds
from pipeline_kit.db.connect import Database
from pipeline_kit.engine.queries import TaskOutput, find_tasks, made_outputs
from pipeline_kit.engine.states import Status
from pipeline_kit.film import film_status
from pipeline_kit.film.cards import contact_pages
from pipeline_kit.film.names import CONTACT, SRT
from pipeline_kit.store import Store, side_name
from pipeline_kit.ui.session import screen_store
from pipeline_kit.ui.media import local_copy
from pipeline_kit.ui.page import Page
from pipeline_kit.ui.widgets import STYLE, reuse
from pipeline_kit.ui.words import state_in_words

FILMS = kinds.names(kinds.Role.FILM)
PLAY_MAX = 300 << 20  # bytes: a longer film is linked, not loaded into the page
LINK_MAX = 32 << 20  # bytes: a download link carries the file itself (base64), so it stays small


@dataclass(frozen=True)
class FilmRow:
    """One film of a book: the whole book's or a chapter's, and where this PC has a copy."""

    bookcode: str
    task_id: str
    label: str  # "the book's film", "chapter 2: The Storm"
    state: str  # in a creator's words: "made", "waiting for its clips (3 of 8 clips done)"
    path: str | None  # a local copy fetched through the store, once made
    subtitles: str | None = None  # its .srt beside it, when there is one
    contact: str | None = None  # its contact sheet beside it, when there is one

    @property
    def ready(self) -> bool:
        return self.path is not None and Path(self.path).is_file()

    @property
    def name(self) -> str:
        """The file name a download gets: the book and which film."""
        return f"{self.bookcode}-{self.task_id.rsplit('/', 1)[-1]}.mp4"


class FilmModel:
    """A book's films: which are made, and a local copy of each made one."""

    def __init__(self, db: Database, bookcode: str, store: Store | None = None) -> None:
        self.db, self.bookcode = db, bookcode
        self.store = store or screen_store(db)

    def films(self) -> tuple[FilmRow, ...]:
        """The book's film first, then each chapter's, made or not (NotFound: unknown book)."""
        status = film_status(self.db, self.bookcode)
        with self.db.reading() as conn:
            found = {r.task_id: r for r in find_tasks(conn, bookcode=self.bookcode, kinds=FILMS)}
        done = f"{status.clips_done} of {status.shots} clips done"
        rows = [
            self._row(
                found.get(status.task_id),
                status.task_id,
                "the book's film",
                done,
                "planned once every chapter is split",
            )
        ]
        rows += [
            self._row(
                found.get(c.task_id),
                c.task_id,
                f"chapter {c.chapter}: {c.title}",
                f"{c.clips_done} of {c.shots} clips done",
                "planned once the chapter is split",
            )
            for c in status.chapters
        ]
        return tuple(rows)

    def _row(self, task: TaskOutput | None, task_id: str, label: str, progress: str, unplanned: str) -> FilmRow:
        if task is None:
            return FilmRow(self.bookcode, task_id, label, f"not planned yet: {unplanned}", None)
        if task.status is not Status.COMPLETED:
            words = state_in_words(task.status, task.kind, waiting=bool(task.deps_remaining), error=task.last_error)
            return FilmRow(self.bookcode, task_id, label, f"{words} ({progress})", None)
        return _made(self.store, self.bookcode, task_id, label, task.output_path, task.result)


def made_films(db: Database, store: Store, bookcode: str | None = None, *, limit: int = 5) -> tuple[FilmRow, ...]:
    """The films made last (in one book, or in all), newest first, each fetched through the store."""
    with db.reading() as conn:
        rows = made_outputs(conn, FILMS, bookcode=bookcode, limit=limit)
    return tuple(
        _made(
            store,
            r.bookcode,
            r.task_id,
            f"{r.bookcode}: "
            + ("the book's film" if r.task_id.endswith("/book") else r.task_id.rsplit("/", 1)[-1].replace("-", " ")),
            r.output_path,
            r.result,
        )
        for r in rows
    )


def _made(store: Store, bookcode: str, task_id: str, label: str, output_path: str, result: object) -> FilmRow:
    """A made film, fetched through the store with its subtitles and contact sheet beside it."""
    path = local_copy(store, output_path, result)
    sides = {s: str(side_name(Path(path), s)) for s in (SRT, CONTACT) if path and side_name(Path(path), s).is_file()}
    return FilmRow(bookcode, task_id, label, "made", path, sides.get(SRT), sides.get(CONTACT))


def film_widget(film: FilmRow, *, width: int = 480) -> w.Widget:
    """One film: its label and state; once made, a player, a download link and where the copy is."""
    title = w.HTML(
        f"<b data-pk='film-label'>{html.escape(film.label)}</b> · "
        f"<span data-pk='film-state'>{html.escape(film.state)}</span>"
    )
    if not film.ready or film.path is None:
        return w.VBox([title])
    path = Path(film.path)
    size = path.stat().st_size
    parts: list[w.Widget] = [title]
    if size <= PLAY_MAX:
        parts.append(
            w.Video(value=path.read_bytes(), format="mp4", width=width, autoplay=False, loop=False, controls=True)
        )
    parts.append(w.HTML(_links(film, path, size)))
    if film.contact:
        parts.append(ContactPages(Path(film.contact), film.name[:-4] + CONTACT).widget)
    box = w.VBox(parts)
    box.add_class("pk-film")
    return box


class ContactPages:
    """A film's contact sheet a page at a time (a few rows, at the sheet's own size, so labels
    read), with previous and next, and a link that downloads the whole sheet."""

    def __init__(self, path: Path, name: str) -> None:
        self.pages = contact_pages(path)
        self.image = w.Image(format="png", layout=w.Layout(max_width="100%"))
        self.previous = w.Button(description="previous page", icon="chevron-left", layout=w.Layout(width="auto"))
        self.next = w.Button(description="next page", icon="chevron-right", layout=w.Layout(width="auto"))
        self.where = w.HTML()
        self.previous.on_click(lambda _: self.show(self.at - 1))
        self.next.on_click(lambda _: self.show(self.at + 1))
        link = _data_link(path, "image/png", name, f"download the whole contact sheet ({_size(path.stat().st_size)})")
        pager = [w.HBox([self.previous, self.where, self.next])] if len(self.pages) > 1 else []
        self.widget = w.VBox([w.HTML("<b>Contact sheet</b>"), self.image, *pager, w.HTML(link)])
        self.at = 0
        self.show(0)

    def show(self, at: int) -> None:
        self.at = max(0, min(at, len(self.pages) - 1))
        self.image.value = self.pages[self.at]
        self.where.value = f"<span data-pk='contact-page'>page {self.at + 1} of {len(self.pages)}</span>"
        self.previous.disabled, self.next.disabled = self.at == 0, self.at == len(self.pages) - 1


def _links(film: FilmRow, path: Path, size: int) -> str:
    """Download links (film, subtitles) when small enough to carry, and the local copy's place."""
    links = []
    if size <= LINK_MAX:
        links.append(_data_link(path, "video/mp4", film.name, f"download the film ({_size(size)})"))
    else:
        links.append(
            f"{_size(size)}, too large to download from the page: "
            f"<code>pipeline-kit export {html.escape(film.bookcode)} FOLDER</code> writes it"
        )
    if film.subtitles:
        links.append(_data_link(Path(film.subtitles), "text/plain", film.name[:-4] + ".srt", "subtitles"))
    return (
        " · ".join(links) + f"<br><small>copy on this PC: <code data-pk='film-path'>"
        f"{html.escape(str(path.resolve()))}</code></small>"
    )


def _size(n: int) -> str:
    """'850 KB', '12.3 MB'."""
    return f"{n / 1e3:.0f} KB" if n < 1e5 else f"{n / 1e6:.1f} MB"


def _data_link(path: Path, mime: str, name: str, text: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return (
        f"<a data-pk='download' download='{html.escape(name)}' href='data:{mime};base64,{data}'>{html.escape(text)}</a>"
    )


class FilmScreen:
    """A book's films in 02: each film's state, and the made ones to play and download."""

    def __init__(self, model: FilmModel, *, page: Page | None = None) -> None:
        """`page`: the page this screen is a section of (02's); *Look again* redraws all of it."""
        self.model = model
        self.page = page if page is not None else Page(self)
        self.look = w.Button(description="Look again for the film", icon="refresh", layout=w.Layout(width="auto"))
        self.look.on_click(lambda _: self.page.redraw())
        self.films = w.VBox()
        self._shown: dict[tuple[str, str | None, str], w.Widget] = {}
        self.widget = w.VBox([w.HTML(STYLE), w.HBox([self.look]), self.films])
        self.redraw()

    def redraw(self) -> tuple[FilmRow, ...]:
        """Re-read the films; a film already shown keeps its player (no second upload of it)."""
        rows = self.model.films()
        self._shown = reuse(self._shown, [((f.task_id, f.path, f.state), f) for f in rows], film_widget)
        self.films.children = tuple(self._shown.values())
        return rows


def film_screen(db: Database, bookcode: str, *, page: Page | None = None) -> FilmScreen:
    return FilmScreen(FilmModel(db, bookcode), page=page)
