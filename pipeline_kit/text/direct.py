"""The director pass, optional: `llm`-lane tasks in which a chat model stages each chapter's shots
and completes the cast's descriptions; the frames, videos and sheets wait for them.

`split --director ollama:qwen2.5` makes, per chapter, a `direct_chapter` task whose params hold
everything it asks (the system prompt from `templates/director_chapter.txt`, the shots in chunks
that fit the model's context, the JSON schema an answer must fit), and one `direct_book` task
asking for the looks of every character no person fixed (`templates/director_book.txt`; locked
characters, which include the ones a person described, are never sent). Each shot task names its
director in `params.director` and depends on it; the worker puts the director's prompt in place
of the rules' one when the director answered for that shot (`backends/direction.py`). Chapter
directors wait for the book's in turn and describe the cast as it wrote, so every shot of a
character is staged from one description. The
prompts are written in `prompt_lang` (English by default, what image models read best); the
spoken line and the captions stay in the book's language.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import shots as shots_table
from pipeline_kit.engine.planned import dependencies, set_params, task_params
from pipeline_kit.engine.queries import tasks_by_id
from pipeline_kit.engine.states import Status
from pipeline_kit.engine.enqueue import enqueue
from pipeline_kit.engine.models import TaskSpec
from pipeline_kit.engine.operator import set_dependencies
from pipeline_kit.errors import BadInput, NotFound
from pipeline_kit.text.cast import Bible
from pipeline_kit.text.graph import FRAMES, shot_task_ids
from pipeline_kit.text.prompts import NO_LETTERING, STYLE, caption, load_template
from pipeline_kit.text.records import Book, Shot
from pipeline_kit.text.splitter import ChapterShots

LANE = "llm"
PROTOCOLS = {"ollama": "qwen2.5", "openai": None}  # protocol -> default model (None: name one)
LANGUAGES = {"en": "English", "zh": "Chinese (简体中文)"}
SHOT_SIZES = ("extreme wide", "wide", "full", "medium", "medium close-up", "close-up", "extreme close-up")

CONTEXT_TOKENS = 8192
ANSWER_TOKENS = {"direct_chapter": 450, "direct_book": 120}  # room kept per shot or character
SNIPPETS, SNIPPET_CHARS = 2, 120  # passages of the book sent per character
SYNOPSIS_CHAPTERS = 8  # the chapters before this one a chapter request sums up
_TEXT = {"type": "string", "maxLength": 1500}
_LINE = {"type": "string", "maxLength": 3000}

CHAPTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["shots"],
    "properties": {
        "shots": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "seq",
                    "shot_size",
                    "camera",
                    "in_frame",
                    "visual",
                    "first_frame",
                    "last_frame",
                    "motion",
                    "line",
                ],
                "properties": {
                    "seq": {"type": "integer"},
                    "shot_size": {"enum": list(SHOT_SIZES)},
                    "camera": {"type": "string", "minLength": 1, "maxLength": 200},
                    "in_frame": _TEXT,
                    "visual": {**_TEXT, "minLength": 1},
                    "first_frame": {**_TEXT, "minLength": 1},
                    "last_frame": {**_TEXT, "minLength": 1},
                    "motion": {**_TEXT, "minLength": 1},
                    "line": _LINE,
                },
            },
        }
    },
}
BOOK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["characters"],
    "properties": {
        "characters": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "description"],
                "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string", "minLength": 1, "maxLength": 600},
                },
            },
        }
    },
}


@dataclass(frozen=True)
class DirectorSettings:
    """Which chat model directs, in which language it writes prompts, how much text it reads at once."""

    protocol: str = "ollama"
    model: str = "qwen2.5"
    prompt_lang: str = "en"
    context_tokens: int = CONTEXT_TOKENS

    @classmethod
    def parse(cls, spec: str, *, prompt_lang: str = "en", context_tokens: int = CONTEXT_TOKENS) -> DirectorSettings:
        """`ollama`, `ollama:MODEL` or `openai:MODEL` (any OpenAI-compatible chat server)."""
        protocol, _, model = spec.strip().partition(":")
        if protocol not in PROTOCOLS:
            raise BadInput(f"--director must be ollama[:MODEL] or openai:MODEL, got {spec!r}")
        model = model or PROTOCOLS[protocol] or ""
        if not model:
            raise BadInput("--director openai needs a model: openai:MODEL (e.g. openai:deepseek-chat)")
        if prompt_lang not in LANGUAGES:
            raise BadInput(f"--prompt-lang must be one of {', '.join(LANGUAGES)}, got {prompt_lang!r}")
        if context_tokens < 2048:
            raise BadInput(f"--director-context must be at least 2048 tokens, got {context_tokens}")
        return cls(protocol, model, prompt_lang, context_tokens)


def estimate_tokens(text: str) -> int:
    """A generous token count: a third of the UTF-8 bytes (a Han character is at least one
    token in most vocabularies; English words are about four characters a token)."""
    return len(text.encode("utf-8")) // 3 + 1


def chunked(entries: Sequence[tuple[Any, str]], budget: int, per_item: int) -> list[list[tuple[Any, str]]]:
    """Consecutive (id, text) entries grouped so that each group's text plus `per_item` answer
    tokens per entry stays within `budget`; an entry too large alone goes alone."""
    groups: list[list[tuple[Any, str]]] = []
    used = budget + 1
    for entry in entries:
        need = estimate_tokens(entry[1]) + per_item
        if used + need > budget:
            groups.append([])
            used = 0
        groups[-1].append(entry)
        used += need
    return groups


def director_task_id(bookcode: str, chapter: int | None = None) -> str:
    """`<bookcode>/direct/c003` for a chapter's director task, `<bookcode>/direct/book` for the cast's."""
    return f"{bookcode}/direct/" + (f"c{chapter:03d}" if chapter is not None else "book")


@dataclass
class Direction:
    """The director tasks of one split run, and the shot tasks rewired to wait for them."""

    book: Book
    bible: Bible | None
    texts: Sequence[str]
    settings: DirectorSettings
    templates: Path | str | None = None
    _gists: dict[int, str] = dataclasses.field(default_factory=dict, repr=False)

    def specs(self, made: Iterable[ChapterShots], shot_specs: list[TaskSpec]) -> list[TaskSpec]:
        """The book's director task, each chapter's, then `shot_specs` depending on theirs."""
        chapters = [m for m in made if m.shots]
        where = {s.shot_id: s for m in chapters for s in m.shots}
        out = [self.book_spec] + [self.chapter_spec(m.shots) for m in chapters]
        return out + [self.rewire(s, where.get(s.shot_id or "")) for s in shot_specs]

    def rewire(self, spec: TaskSpec, shot: Shot | None) -> TaskSpec:
        """A sheet after the book's director task, a frame or video after its chapter's; the
        director (and the shot's seq) named in the params, so the worker knows whose prompt to use."""
        params = dict(spec.params or {})
        if spec.kind == "character_sheet":
            params["director"] = self.book_spec.task_id
        elif spec.kind in (*FRAMES, "video") and shot is not None:
            params.update(director=director_task_id(shot.bookcode, shot.chapter), seq=shot.seq)
        else:
            return spec
        return dataclasses.replace(
            spec,
            params=params,
            depends_on=(*spec.depends_on, params["director"]),
            optional=(*spec.optional, params["director"]),  # a director that fails leaves the rules' prompts
        )

    def _base(self, kind: str, template: str) -> dict[str, Any]:
        s = self.settings
        system = load_template(template, self.templates).safe_substitute(
            title=self.book.title,
            prompt_lang=LANGUAGES[s.prompt_lang],
            book_lang=LANGUAGES.get(self.book.lang, self.book.lang),
            shot_sizes=", ".join(SHOT_SIZES),
        )
        return {
            "bookcode": self.book.bookcode,
            "protocol": s.protocol,
            "model": s.model,
            "prompt_lang": s.prompt_lang,
            "context_tokens": s.context_tokens,
            "style": self.book.style or STYLE,
            "no_lettering": NO_LETTERING,
            "schema": CHAPTER_SCHEMA if kind == "direct_chapter" else BOOK_SCHEMA,
            "system": system,
        }

    def _chunks(
        self, kind: str, system: str, header: Callable[[list[Any]], str], entries: list[tuple[Any, str]]
    ) -> list[dict[str, Any]]:
        """Entries in groups that fit the context, each sent after the system prompt and its own
        header (`header(ids)`: what that group needs, so an unchanged group asks the same again)."""
        budget = self.settings.context_tokens - estimate_tokens(system + header([k for k, _ in entries])) - 256
        chunks = []
        for group in chunked(entries, budget, ANSWER_TOKENS[kind]):
            ids = [key for key, _ in group]
            user = header(ids) + "\n\n" + "\n\n".join(text for _, text in group)
            chunks.append(
                {
                    "expect": ids,
                    "max_tokens": ANSWER_TOKENS[kind] * len(group) + 256,
                    "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
                }
            )
        return chunks

    def chapter_spec(self, shots: Sequence[Shot]) -> TaskSpec:
        """The chapter's director task: its shots in chunks that fit, each with its cast's looks."""
        chapter = shots[0].chapter
        params = self._base("direct_chapter", "director_chapter")
        looks = {c.name: c.description for c in self.bible.characters} if self.bible else {}
        named = {s.seq: s.characters for s in shots}

        where = {s.seq: s.location for s in shots}
        places = {p.name: p.description for p in self.bible.places} if self.bible else {}
        story = self.synopsis(chapter)

        def header(seqs: list[Any]) -> str:
            cast = dict.fromkeys(n for seq in seqs for n in named[seq])
            lines = "\n".join(f"- {n}: {looks.get(n) or 'not described'}" for n in cast) or "- none named"
            sets = dict.fromkeys(where[seq] for seq in seqs if where[seq])
            settings = "".join(f"\n* {p}: {places.get(p) or 'not described'}" for p in sets)
            return (
                f'Chapter {chapter} of "{self.book.title}". Cast:\n{lines}'
                + (f"\nPlaces:{settings}" if settings else "")
                + f"\nStyle of the film: {self.book.style or STYLE}."
                + (f"\nThe story so far: {story}" if story else "")
            )

        entries = [
            (
                s.seq,
                f"[shot {s.seq}] scene {s.scene}; place: {s.location or 'unspecified'}; "
                f"time: {s.time_of_day or 'unspecified'}; characters: "
                f"{', '.join(s.characters) or 'none named'}\n{caption(s.text, self.book.lang)}",
            )
            for s in shots
        ]
        params.update(
            chapter=chapter,
            chunks=self._chunks("direct_chapter", params.pop("system"), header, entries),
            director=director_task_id(self.book.bookcode),
        )  # the cast's looks come from there
        return TaskSpec(
            task_id=director_task_id(self.book.bookcode, chapter),
            kind="direct_chapter",
            lane=LANE,
            params=params,
            bookcode=self.book.bookcode,
            depends_on=(params["director"],),
            optional=(params["director"],),
        )

    def synopsis(self, chapter: int) -> str:
        """The book before `chapter`, a clause per chapter (its main people and places, from the
        bible), the last SYNOPSIS_CHAPTERS of them: what the director needs to stage in context."""
        start = max(1, chapter - SYNOPSIS_CHAPTERS)
        parts = [self._chapter_gist(n) for n in range(start, chapter) if n - 1 < len(self.texts)]
        return " ".join(p for p in parts if p)

    def _chapter_gist(self, number: int) -> str:
        if number not in self._gists:
            text = self.texts[number - 1]
            people = Counter(name for _, name in self.bible.mentions(text)) if self.bible else Counter()
            places = Counter(name for _, name in self.bible.place_mentions(text)) if self.bible else Counter()
            who = ", ".join(n for n, _ in people.most_common(3))
            at = ", ".join(n for n, _ in places.most_common(2))
            self._gists[number] = f"Ch. {number}: {who or 'no one named'}" + (f" at {at}" if at else "") + "."
        return self._gists[number]

    @cached_property
    def book_spec(self) -> TaskSpec:
        """The book's director task: every character no person fixed, with its notes and passages."""
        params = self._base("direct_book", "director_book")
        todo = [c for c in (self.bible.characters if self.bible else ()) if not (c.locked or c.dropped)]
        passages = self._passages({c.name for c in todo})
        entries = [
            (
                c.name,
                f"[{c.name}] also called: {', '.join(c.aliases) or '-'}; notes: "
                f"{c.description or '-'}; passages: " + " / ".join(passages.get(c.name, [])),
            )
            for c in todo
        ]
        title = f'Characters of "{self.book.title}":'
        params["chunks"] = self._chunks("direct_book", params.pop("system"), lambda _: title, entries)
        return TaskSpec(
            task_id=director_task_id(self.book.bookcode),
            kind="direct_book",
            lane=LANE,
            params=params,
            bookcode=self.book.bookcode,
        )

    def _passages(self, names: set[str]) -> dict[str, list[str]]:
        """Up to SNIPPETS passages around each character's first mentions in the book."""
        found: dict[str, list[str]] = {}
        if self.bible is None or not names:
            return found
        for text in self.texts:
            for offset, name in self.bible.mentions(text):
                if name in names and len(found.setdefault(name, [])) < SNIPPETS:
                    start = max(0, offset - SNIPPET_CHARS // 2)
                    found[name].append(caption(text[start : start + SNIPPET_CHARS], self.book.lang))
            if all(len(found.get(n, ())) >= SNIPPETS for n in names):
                break
        return found


def book_director(conn: sa.Connection, bookcode: str) -> DirectorSettings | None:
    """The settings the book was directed with (its `direct_book` task's), so a chapter that comes
    later is staged like the others; None for a book split without a director."""
    params = task_params(conn, [director_task_id(bookcode)]).get(director_task_id(bookcode))
    return _settings(params) if params else None


def _settings(params: dict[str, Any]) -> DirectorSettings:
    return DirectorSettings(params["protocol"], params["model"], params["prompt_lang"], params["context_tokens"])


def redirect(conn: sa.Connection, book: Book, shots: Sequence[Shot], bible: Bible | None) -> str | None:
    """After a chapter was re-split: the shots that changed or were added get a director task of
    their own, with the chapter director's settings, and wait for it; the other shots keep their
    answers. Its id carries a hash of what it asks, so the same re-split twice adds nothing, and
    its chunks' answers are kept like any. None when the chapter had no director."""
    if not shots:
        return None
    chapter = director_task_id(book.bookcode, shots[0].chapter)
    old = task_params(conn, [chapter]).get(chapter)
    if not old:
        return None
    spec = Direction(book, bible, (), _settings(old)).chapter_spec(shots)
    digest = hashlib.sha256(json.dumps(spec.params, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    spec = dataclasses.replace(spec, task_id=f"{spec.task_id}-{digest[:8]}")
    enqueue(conn, [spec])
    for shot in shots:
        for kind, task_id in shot_task_ids(shot.shot_id).items():
            if kind == "voice":  # the director stages pictures; a shot's lines are the book's
                continue
            params = task_params(conn, [task_id]).get(task_id, {})
            set_params(conn, task_id, {**params, "director": spec.task_id, "seq": shot.seq})
            deps = dependencies(conn, task_id)
            kept = [d for d in deps if not d.startswith(director_task_id(book.bookcode, shot.chapter))]
            set_dependencies(conn, task_id, [*kept, spec.task_id], optional=[spec.task_id])
    return spec.task_id


def director_looks(conn: sa.Connection, bookcode: str) -> dict[str, str]:
    """The looks the book's director pass wrote for each character, once its task completed
    ({} before, or without a director); a person's description still wins where there is one."""
    row = next(iter(tasks_by_id(conn, [director_task_id(bookcode)])), None)
    if row is None or row.status is not Status.COMPLETED:
        return {}
    return {str(k): str(v) for k, v in ((row.result or {}).get("characters") or {}).items() if v}


def shot_direction(db: Database, shot_id: str) -> dict[str, Any] | None:
    """What the shot's director wrote for it (staging, prompts, line) once its task has completed
    with an answer for it; None without a director or before it answered."""
    with db.reading() as conn:
        shot = conn.execute(sa.select(shots_table.c.seq).where(shots_table.c.shot_id == shot_id)).first()
        if shot is None:
            raise NotFound(f"no shot {shot_id!r}")
        first = shot_task_ids(shot_id)["first_frame"]
        director = task_params(conn, [first]).get(first, {}).get("director")
        row = next(iter(tasks_by_id(conn, [director])), None) if director else None
    if row is None or row.status is not Status.COMPLETED:
        return None
    item = (row.result or {}).get("shots", {}).get(str(shot.seq))
    return dict(item) if item else None
