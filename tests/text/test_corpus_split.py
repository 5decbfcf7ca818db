"""The rule-based splitter on the two real corpus books (whole books, split once per module).

Calibration (stated ranges): 西游记's first 17 sections (93,866 Han characters) give about 1,040
shots ± 15% (~90 Han characters a shot; 1,016 measured); the whole of Sherlock gives about 2,300
shots ± 25% (2 to 4 sentences a shot; 2,113 measured).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from pipeline_kit.text.chapters import RawChapter, find_chapters, one_chapter
from pipeline_kit.text.shots import ShotDraft, split_chapter
from tests.conftest import CORPUS

BOOKS = {"zh": "zh_xiyouji.txt", "en": "en_adventures_of_sherlock_holmes.txt"}


@dataclass(frozen=True)
class Split:
    chapters: tuple[RawChapter, ...]
    shots: tuple[tuple[ShotDraft, ...], ...]


@pytest.fixture(scope="module", params=sorted(BOOKS))
def book(request: pytest.FixtureRequest) -> tuple[str, Split]:
    lang = request.param
    found = find_chapters((CORPUS / BOOKS[lang]).read_text(encoding="utf-8"), lang)
    return lang, Split(found.chapters, tuple(tuple(split_chapter(c.text, lang)) for c in found.chapters))


def test_spans_reassemble_each_chapter_exactly(book: tuple[str, Split]) -> None:
    """Shots tile their chapter: in order, from 0 to the end, nothing dropped and nothing repeated."""
    _, split = book
    for chapter, shots in zip(split.chapters, split.shots):
        assert shots[0].span_start == 0 and shots[-1].span_end == len(chapter.text)
        assert all(a.span_end == b.span_start for a, b in zip(shots, shots[1:]))
        assert "".join(chapter.text[s.span_start : s.span_end] for s in shots) == chapter.text
        assert [s.seq for s in shots] == list(range(1, len(shots) + 1))
        assert all(chapter.text[s.span_start : s.span_end].strip() for s in shots)


def test_two_runs_give_identical_shots(book: tuple[str, Split]) -> None:
    """Splitting is deterministic: the same chapter gives the same shots every time."""
    lang, split = book
    for k in (0, len(split.chapters) // 2, len(split.chapters) - 1):
        assert tuple(split_chapter(split.chapters[k].text, lang)) == split.shots[k]


def test_shot_counts_are_calibrated(book: tuple[str, Split]) -> None:
    """Shot counts stay in the stated ranges (see the module docstring)."""
    lang, split = book
    if lang == "zh":
        count = sum(len(s) for s in split.shots[:17])
        assert 1040 * 0.85 <= count <= 1040 * 1.15, count
    else:
        count = sum(len(s) for s in split.shots)
        assert 2300 * 0.75 <= count <= 2300 * 1.25, count


_ZH_END = re.compile(r"[。！？!?…”」』）)\]\"：:；;]\s*$")
_EN_END = re.compile(r"[.!?”’\")_\]:;—-]\s*$")


def test_no_cut_inside_a_sentence_or_quotation(book: tuple[str, Split]) -> None:
    """Every cut between shots falls after a sentence end or at a paragraph break, with no quotation open."""
    lang, split = book
    end = _ZH_END if lang == "zh" else _EN_END
    for chapter, shots in zip(split.chapters, split.shots):
        text = chapter.text
        for shot in shots[:-1]:
            cut = shot.span_end
            before = text[shot.span_start : cut]
            body_end = shot.span_start + len(before.rstrip())
            sep = "\n" if lang == "zh" else "\n\n"
            found = text.rfind(sep, 0, body_end)
            para_start = 0 if found < 0 else found + len(sep)
            at_paragraph_break = sep in text[body_end : cut + 1]
            assert at_paragraph_break or end.search(before), (chapter.title, before[-40:])
            if not at_paragraph_break:
                head = text[para_start:cut]
                opened = sum(head.count(q) for q in "“「『") - sum(head.count(q) for q in "”」』")
                assert opened <= 0 and head.count('"') % 2 == 0, (chapter.title, before[-60:])


def test_main_characters_are_found(book: tuple[str, Split]) -> None:
    """西游记's early chapters name 孙悟空 (or 悟空/行者) and 唐僧 (or 三藏); Sherlock names Holmes and Watson."""
    lang, split = book
    if lang == "zh":
        names = {n for shots in split.shots[:17] for s in shots for n in s.characters}
        assert names & {"孙悟空", "悟空", "行者", "孙行者"}, sorted(names)[:50]
        assert names & {"唐僧", "三藏", "唐三藏"}, sorted(names)[:50]
    else:
        names = {n for shots in split.shots for s in shots for n in s.characters}
        assert any("Holmes" in n for n in names) and any("Watson" in n for n in names), sorted(names)[:50]


def test_scenes_count_up_from_one(book: tuple[str, Split]) -> None:
    """Scene numbers start at 1 in each chapter and only ever step up by one."""
    _, split = book
    for shots in split.shots:
        assert shots[0].scene == 1
        assert all(b.scene - a.scene in (0, 1) for a, b in zip(shots, shots[1:]))


def test_chapter_by_chapter_entry_gives_the_same_shots(book: tuple[str, Split]) -> None:
    """A chapter entered alone (--chapter N, heading included) is stored and split exactly as in the whole book."""
    lang, split = book
    for k in (0, len(split.chapters) - 1):
        chapter = split.chapters[k]
        alone = one_chapter(f"{chapter.title}\n\n{chapter.text}\n", k + 1).chapters[0]
        assert alone == chapter
        assert tuple(split_chapter(alone.text, lang)) == split.shots[k]
