"""The film's tasks in the book's task graph: one assembly per chapter (after its shots' videos
and voices, and the book's music bed if it has one), one for the book; planned in the split's
transaction, like the shots' tasks (`graph.py`). The book's film profile (`film/profile.py`)
decides their picture: a fixed size and rate, or `provider` (the clips' own, found when the
films are assembled).

`assembly_specs` reads the book's chapters, shots and video tasks and returns TaskSpecs with
business keys, so calling it again (as every split transaction does) adds nothing. The book's
task is first planned once every chapter is split. Chapters may come at any time: `plan_assembly`
plans a chapter split later and re-plans the book's film over every chapter (reset, attempts
kept, if it was made or is being made), in the transaction that wrote the chapter's shots.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.driver import within
from pipeline_kit.db.schema import books, chapters
from pipeline_kit.engine.planned import set_params, task_params, task_shots
from pipeline_kit.engine.enqueue import enqueue
from pipeline_kit.engine.models import TaskSpec
from pipeline_kit.engine.operator import reset_tasks, set_dependencies
from pipeline_kit.errors import BadInput, NotFound
from pipeline_kit.film.dialogue import subtitles
from pipeline_kit.film.names import (
    BOOK_KIND,
    CHAPTER_KIND,
    LANE,
    book_film_path,
    book_task_id,
    chapter_film_path,
    chapter_task_id,
    music_task_id,
)
from pipeline_kit.film.profile import FilmProfile, parse_profile
from pipeline_kit.film.timeline import TITLE_CARD_S, card_frames, frames_for
from pipeline_kit.text.graph import shot_task_id
from pipeline_kit.text.records import lock_book

_CHUNK = 500  # ids per IN (...) lookup


def assembly_specs(conn: sa.Connection, bookcode: str, only: Collection[int] | None = None) -> list[TaskSpec]:
    """Chapter assemblies for every split chapter with shots (those numbered in `only`, if given:
    the chapters a split just wrote); the book's, over every chapter, once all are split."""
    book = conn.execute(
        sa.select(books.c.title, books.c.lang, books.c.film_profile, books.c.music).where(books.c.bookcode == bookcode)
    ).first()
    if book is None:
        raise NotFound(f"no book {bookcode!r}")
    look = Look(parse_profile(book.film_profile), music_task_id(bookcode) if book.music else None)
    chapter_rows = conn.execute(
        sa.select(chapters.c.number, chapters.c.title, chapters.c.split_at)
        .where(chapters.c.bookcode == bookcode)
        .order_by(chapters.c.number)
    ).all()
    whole = all(ch.split_at is not None for ch in chapter_rows)  # the book's film can be planned
    by_chapter: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for row in _shot_rows(conn, bookcode, None if only is None or whole else sorted(only)):
        by_chapter[row["chapter"]].append(row)
    every_shot = [r["shot_id"] for chapter in by_chapter.values() for r in chapter]
    videos, voiced = _shots_with(conn, every_shot, ("video", "voice"))
    planned = {ch.number: ch for ch in chapter_rows if ch.split_at is not None and by_chapter[ch.number]}
    missing = [r["shot_id"] for n in planned for r in by_chapter[n] if r["shot_id"] not in videos]
    if missing:
        raise BadInput(f"shot {missing[0]!r} has no video task: enqueue its tasks first")
    every = {
        n: _chapter_spec(
            bookcode, n, ch.title, by_chapter[n], voiced, book.lang, look, subtitled=only is None or n in only
        )
        for n, ch in planned.items()
    }
    specs = [spec for n, spec in every.items() if only is None or n in only]
    if every and whole:
        specs.append(_book_spec(bookcode, book.title, list(every.values()), look))
    return specs


@dataclass(frozen=True)
class Look:
    """What the book's settings put in its films' plans: the picture, and the music bed's task."""

    profile: FilmProfile
    music_task: str | None = None

    def picture(self) -> dict[str, Any]:
        """The params naming the films' picture: the profile, and its size and rate if fixed."""
        fixed = {"width": self.profile.width, "height": self.profile.height, "fps": self.profile.fps}
        return {"profile": self.profile.name, **(fixed if self.profile.fixed else {})}


def _shot_rows(conn: sa.Connection, bookcode: str, chapters: list[int] | None) -> list[dict[str, Any]]:
    """The book's shots (of `chapters` only, if given) in order, as the films plan them; through
    the driver: the last split transaction reads every shot of the book, text and all."""
    if chapters == []:
        return []
    sql = "SELECT shot_id, chapter, text, dialogue, duration_s FROM shots WHERE bookcode = :bookcode"
    params: dict[str, Any] = {"bookcode": bookcode}
    if chapters is not None:
        sql += " AND chapter IN :chapters"
        params["chapters"] = chapters
    with within(conn, conn.dialect.name) as tx:
        return tx.rows(f"{sql} ORDER BY chapter, seq", params)


def _shots_with(conn: sa.Connection, shot_ids: list[str], kinds: tuple[str, ...]) -> list[set[str]]:
    """For each of `kinds`, the shots (of `shot_ids`) that have that task (books planned before
    voices have no voice); one lookup for all of them."""
    wanted = {shot_task_id(s, kind): k for s in shot_ids for k, kind in enumerate(kinds)}
    keys = list(wanted)
    found: list[set[str]] = [set() for _ in kinds]
    for i in range(0, len(keys), _CHUNK):
        for task, shot in task_shots(conn, keys[i : i + _CHUNK]).items():
            if shot:
                found[wanted[task]].add(shot)
    return found


def _chapter_spec(
    bookcode: str,
    number: int,
    title: str,
    rows: list[Mapping[str, Any]],
    voiced: Collection[str],
    lang: str,
    look: Look,
    *,
    subtitled: bool = True,
) -> TaskSpec:
    """The chapter's assembly; without `subtitled` its shots carry no subtitles (enough to time the
    book's film from, and far cheaper for a chapter that is not being re-planned)."""
    shot_params = [
        {
            "shot_id": r["shot_id"],
            "video_task": shot_task_id(r["shot_id"], "video"),
            "duration_s": float(r["duration_s"]),
            "subtitles": subtitles(r["text"], dialogue=bool(r["dialogue"]), lang=lang) if subtitled else [],
            **({"voice_task": shot_task_id(r["shot_id"], "voice")} if r["shot_id"] in voiced else {}),
        }
        for r in rows
    ]
    params = {
        "bookcode": bookcode,
        "chapter": number,
        "title": title,
        "lang": lang,
        "shots": shot_params,
        **look.picture(),
        "title_card_s": TITLE_CARD_S,
        "burn_subtitles": False,
        "publish_as": chapter_film_path(bookcode, number),
        **({"music_task": look.music_task} if look.music_task else {}),
    }
    music = (look.music_task,) if look.music_task else ()
    return TaskSpec(
        task_id=chapter_task_id(bookcode, number),
        kind=CHAPTER_KIND,
        lane=LANE,
        params=params,
        depends_on=tuple(t for s in shot_params for t in (s["video_task"], s.get("voice_task")) if t) + music,
        optional=music,  # the music is a bed: a film goes ahead without it rather than never
        bookcode=bookcode,
    )


def chapter_duration_s(params: Mapping[str, Any]) -> float:
    """The planned length of the film a chapter's assembly makes: its title card plus its shots
    (in whole frames at its rate; in seconds when the clips' own rate decides)."""
    if not params.get("fps"):
        return float(params["title_card_s"]) + sum(float(s["duration_s"]) for s in params["shots"])
    fps = int(params["fps"])
    frames = card_frames(float(params["title_card_s"]), fps) + sum(
        frames_for(float(s["duration_s"]), fps) for s in params["shots"]
    )
    return frames / fps


def _book_spec(bookcode: str, title: str, chapter_specs: list[TaskSpec], look: Look) -> TaskSpec:
    entries = [
        {
            "chapter": p["chapter"],
            "title": p["title"],
            "task": spec.task_id,
            "duration_s": round(chapter_duration_s(p), 3),
        }
        for spec in chapter_specs
        for p in [dict(spec.params or {})]
    ]
    params = {
        "bookcode": bookcode,
        "title": title,
        "chapters": entries,
        **look.picture(),
        "title_card_s": TITLE_CARD_S,
        "publish_as": book_film_path(bookcode),
    }
    return TaskSpec(
        task_id=book_task_id(bookcode),
        kind=BOOK_KIND,
        lane=LANE,
        params=params,
        depends_on=tuple(e["task"] for e in entries),
        bookcode=bookcode,
    )


@dataclass(frozen=True)
class AssemblyPlan:
    """What planning a book's films did: tasks created, and the ones re-planned and reset (with why)."""

    created: int
    reset: tuple[str, ...]
    why: tuple[str, ...]


def plan_assembly(conn: sa.Connection, bookcode: str, only: Collection[int] | None = None) -> AssemblyPlan:
    """Enqueue missing assembly tasks and re-plan stale ones (a chapter added, or re-split).

    New tasks go in first, so a book film re-planned over a chapter added in this call can name
    that chapter's film. A stale task gets the new params and dependencies and is reset (attempts
    kept; the reset's reason says why), so its chapter and the book are assembled again from the
    current shots; a film whose plan did not change is left alone. `only`: the chapters whose
    shots were just written (the others' films are as planned when theirs were); None plans all.
    """
    # Racing splits of one book plan its films one at a time (the book row lock), so each task is
    # created, and counted, once.
    lock_book(conn, bookcode)
    specs = assembly_specs(conn, bookcode, only)
    stored = task_params(conn, [s.task_id for s in specs])
    created = enqueue(conn, [s for s in specs if s.task_id not in stored]).created
    stale = [s for s in specs if s.task_id in stored and stored[s.task_id] != dict(s.params or {})]
    why = tuple(replan_reason(s.kind, stored[s.task_id], dict(s.params or {})) for s in stale)
    for spec in stale:
        set_params(conn, spec.task_id, dict(spec.params or {}))
        set_dependencies(conn, spec.task_id, spec.depends_on, spec.optional)
    reset = reset_tasks(conn, [s.task_id for s in stale], reason="; ".join(why)) if stale else []
    return AssemblyPlan(created, tuple(reset), why)


def replan_reason(kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """Why a film's plan changed, in words: the film profile or the music changed; the chapters
    added to or changed in the book's film, the shots added, removed or changed in a chapter's."""
    look = _look_reason(old, new)
    if kind == BOOK_KIND:
        return "; ".join(look + _book_reason(old.get("chapters") or [], new.get("chapters") or [])) or (
            "the book's title changed"
        )
    was = {s["shot_id"]: s for s in old.get("shots") or []}
    now = {s["shot_id"]: s for s in new.get("shots") or []}
    counts = {
        "added": sum(k not in was for k in now),
        "removed": sum(k not in now for k in was),
        "changed": sum(k in now and now[k] != s for k, s in was.items()),
    }
    said = ", ".join(f"{n} {word}" for word, n in counts.items() if n)
    if said or not look:
        look.append(f"chapter {new.get('chapter')}'s shots changed ({said or 'order or title'})")
    return "; ".join(look)


def _look_reason(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The book's film settings that changed between two plans of one film."""
    parts = []
    picture = [(p.get("profile"), p.get("width"), p.get("height"), p.get("fps")) for p in (old, new)]
    if picture[0] != picture[1]:
        parts.append(f"the film profile changed ({old.get('profile') or 'fixed size'} -> {new.get('profile')})")
    if old.get("music_task") != new.get("music_task"):
        parts.append("the music was added" if new.get("music_task") else "the music was taken off")
    return parts


def _book_reason(old: list[Mapping[str, Any]], new: list[Mapping[str, Any]]) -> list[str]:
    was = {int(c["chapter"]): c for c in old}
    now = {int(c["chapter"]): c for c in new}
    parts = [f"chapter {n} added" for n in now if n not in was]
    parts += [f"chapter {n} changed" for n in now if n in was and was[n] != now[n]]
    parts += [f"chapter {n} has no shots now" for n in was if n not in now]
    return parts
