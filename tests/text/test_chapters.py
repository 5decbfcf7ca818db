"""Chapter detection: the common markers, and the look-alikes that must not start a chapter."""

from __future__ import annotations

import pytest
from tests.conftest import CORPUS

from pipeline_kit.errors import BadInput
from pipeline_kit.text.chapters import find_chapters, is_heading, one_chapter


@pytest.mark.parametrize(
    "line",
    [
        "第一回　灵根育孕源流出　心性修持大道生",
        "第十二章 风起",
        "第3章",
        "卷三 江湖",
        "附录　陈光蕊赴任逢灾",
        "CHAPTER I.",
        "Chapter 12: The Return",
        "Chapter One",
        "I. A SCANDAL IN BOHEMIA",
        "XII. THE ADVENTURE OF THE COPPER BEECHES",
        "IX. THE ADVENTURE OF THE ENGINEER’S THUMB",
        "# Part One",
        "## The Storm",
    ],
)
def test_headings_are_recognised(line: str) -> None:
    """Every common chapter marker style starts a chapter."""
    assert is_heading(line)


@pytest.mark.parametrize(
    "line",
    [
        "   I.     A Scandal in Bohemia",
        "I.",
        "II.",
        "    第一回　缩进的目录",
        "第一回说的是他。" * 10,
        "Chapter and verse were quoted.",
        "I. Then he spoke of it",
        "#hashtag",
        "    诗曰：",
    ],
)
def test_look_alikes_are_not_headings(line: str) -> None:
    """Contents entries (indented, title case), bare part markers and prose are not chapter markers."""
    assert not is_heading(line)


def test_corpus_books_have_their_known_chapters() -> None:
    """西游记 has 101 sections (100 回 + 附录); Sherlock 12 stories; the contents list is not a chapter."""
    zh = find_chapters((CORPUS / "zh_xiyouji.txt").read_text(encoding="utf-8"), "西游记")
    assert len(zh.chapters) == 101
    assert zh.chapters[8].title.startswith("附录")
    assert zh.chapters[-1].title.startswith("第一百回")
    en = find_chapters((CORPUS / "en_adventures_of_sherlock_holmes.txt").read_text(encoding="utf-8"), "x")
    assert [c.title.split(".")[0] for c in en.chapters] == "I II III IV V VI VII VIII IX X XI XII".split()
    assert en.chapters[0].text.startswith("I.\n\nTo Sherlock Holmes")  # the bare part marker stays in the text


def test_text_without_markers_is_one_chapter_with_a_warning() -> None:
    """No markers: the whole text is one chapter titled after the book, and the result says so."""
    found = find_chapters("\n\nOnce upon a time.\n\nThe end.\n", "Tale")
    assert [(c.title, c.text) for c in found.chapters] == [("Tale", "Once upon a time.\n\nThe end.")]
    assert any("one chapter" in w for w in found.warnings)


def test_a_marker_with_no_body_is_refused_or_skipped() -> None:
    """A lone heading is BadInput; an empty heading among real chapters is skipped with a warning."""
    with pytest.raises(BadInput, match="no text"):
        find_chapters("Chapter 1\n\n   \n", "x")
    with pytest.raises(BadInput, match="no text"):
        one_chapter("第一回　空\n\n", 1)
    found = find_chapters("Chapter 1\nBody one.\nChapter 2\n\nChapter 3\nBody three.\n", "x")
    assert [c.title for c in found.chapters] == ["Chapter 1", "Chapter 3"]
    assert any("Chapter 2" in w for w in found.warnings)


def test_one_chapter_takes_its_heading_as_title_and_refuses_two() -> None:
    """--chapter N: a first-line heading is the title; a second heading in the file is BadInput."""
    found = one_chapter("Chapter 4. Home\n\nThey came home.\n", 4)
    assert (found.chapters[0].title, found.chapters[0].text) == ("Chapter 4. Home", "They came home.")
    assert one_chapter("Just text.", 2).chapters[0].title == "Chapter 2"
    with pytest.raises(BadInput, match="one chapter"):
        one_chapter("Chapter 1\nA.\nChapter 2\nB.\n", 1)


def test_numbers_alone_on_their_lines_are_sections_of_a_text_with_no_other_heading() -> None:
    """A story cut into sections numbered 一, 二 (or I, II) on lines of their own has those
    sections as chapters, its title line before them left out; numbers that do not count up from
    one, or a lone number, are no headings (a text with real headings keeps its bare part markers)."""
    zh = find_chapters("盐场\n\n一\n\n天刚亮。\n\n二\n\n晚上，小满回到家里。\n\n十一\n\n完。\n", "x")
    assert [c.title for c in zh.chapters] == ["一", "二"]  # 十一 is no third section: the sequence ends at 二
    assert zh.chapters[1].text == "晚上，小满回到家里。\n\n十一\n\n完。"
    en = find_chapters("The Road\n\nI\n\nThey left.\n\nII.\n\nThey came back.\n", "x")
    assert [(c.title, c.text) for c in en.chapters] == [("I", "They left."), ("II.", "They came back.")]
    for text in ("T\n\n一\n\n甲。\n\n三\n\n乙。\n", "T\n\n二\n\n甲。\n", "T\n\nI\n\nOne.\n\nII\nTwo.\n"):
        assert len(find_chapters(text, "x").chapters) == 1, text
