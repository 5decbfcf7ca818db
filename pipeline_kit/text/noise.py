"""What a book's file carries that is not the story: web-page markers and editorial note blocks.

Books scraped from the web keep their pages' furniture: a page marker on a line of its own
(`_分节阅读_12`, `-- 12 --`, `Page 12`, `第12页`), an end mark (（本章完）, THE END), the site's navigation
(上一页, 返回目录), HTML comments, and the editors' notes, a block headed 注释/注/Notes whose lines open
with a note mark (〔1〕, [2], ①, ⑴, ⒈; the first note may share the heading's line), plus the
marks in the text that point at them. Editions add bracketed blocks ([Illustration: …],
[Footnote: …]) and e-texts a licence header and footer around the story. `clean` drops them, so
no shot is made of them.
"""

from __future__ import annotations

import re

_NUM = r"[0-9０-９]+|[一二三四五六七八九十百千零〇]+"
# A line that is only a page or section marker: an optional word for "page" and a number.
_PAGE_LINE = re.compile(
    rf"^[\W_]*(?:(?:分节阅读|分页阅读|page|pg\.?|p\.)[\W_]*(?:{_NUM})|第[\W_]*(?:{_NUM})[\W_]*页|[0-9０-９]+)[\W_]*$",
    re.I,
)
# Site furniture: navigation and download notices, on short lines of their own.
_CHROME = re.compile(r"上一页|下一页|返回目录|加入书签|本章未完|点击下一页|txt下载|全文阅读|手机阅读|更多精彩")
_CHROME_MAX = 40
# A story's or chapter's end mark on a line of its own: （本章完）, (完), 未完待续, THE END.
_END_LINE = re.compile(
    r"^[\W_]*(?:本章完|本章结束|本回完|全文完|全书完|未完待续|待续|the end|finis)[\W_]*$|^[（(]完[)）]$", re.I
)
# A note mark: a bracketed number or a circled, parenthesised or dotted digit (①, ⑴, ⒈).
NOTE_MARK = r"(?:〔(?:[0-9０-９]+)〕|［(?:[0-9０-９]+)］|\[(?:[0-9]+)\]|[①-⑳⑴-⒇⒈-⒛])"
_NOTE_WORD = r"(?:注释|注解|附注|注|校注|译注|notes?|footnotes?|endnotes?)"
_NOTE_HEAD = re.compile(rf"^[\W_]*{_NOTE_WORD}[\W_]*$", re.I)
# A note heading with its first note on the same line (`注释　⑴本篇最初发表于……`).
_NOTE_HEAD_INLINE = re.compile(rf"^[\W_]*{_NOTE_WORD}[\W_]*{NOTE_MARK}", re.I)
_NOTE_LINE = re.compile(rf"^\s*{NOTE_MARK}")
_INLINE_MARK = re.compile(rf"[(（]{NOTE_MARK}[)）]|{NOTE_MARK}")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)  # a scraped page's hidden notes (site adverts, dates)
# An edition's bracketed blocks: [Illustration: …] (one line or several, a [credit] inside), [Footnote 3: …].
_EDITION_BLOCK = re.compile(
    r"\[(?:Illustration|Footnote|Sidenote|Transcriber[’']s [Nn]ote)\b(?:[^\[\]]|\[[^\[\]]*\]){0,3000}\]"
)
# An e-text's licence header and footer: the story is between its START and END lines.
_ETEXT_START = re.compile(r"^\*{3} ?START OF (?:THIS|THE) PROJECT GUTENBERG.*$", re.M)
_ETEXT_END = re.compile(r"^\*{3} ?END OF (?:THIS|THE) PROJECT GUTENBERG.*$", re.M)
_INLINE_PAGE = re.compile(r"_?分节阅读_?[0-9０-９]+_?")


def is_noise_line(line: str) -> bool:
    """A page marker or a line of site navigation (never a line of the story)."""
    flat = line.strip()
    if not flat:
        return False
    return (
        bool(_PAGE_LINE.match(flat) or _END_LINE.match(flat)) or len(flat) <= _CHROME_MAX and bool(_CHROME.search(flat))
    )


def _story_part(text: str) -> str:
    """The text between an e-text's START and END lines (all of it when it has none)."""
    start, end = _ETEXT_START.search(text), _ETEXT_END.search(text)
    if start and end and start.end() < end.start():
        return text[start.end() : end.start()]
    return text


def clean(text: str) -> str:
    """The text less page markers, navigation lines, note blocks and note marks."""
    out: list[str] = []
    in_notes = False
    for line in _EDITION_BLOCK.sub("", _HTML_COMMENT.sub("", _story_part(text))).split("\n"):
        flat = line.strip()
        if _NOTE_HEAD.match(flat) or _NOTE_HEAD_INLINE.match(flat):
            in_notes = True
            continue
        if in_notes and (not flat or _NOTE_LINE.match(flat)):
            continue  # the note block goes on to its last marked line
        in_notes = False
        if _NOTE_LINE.match(flat) or is_noise_line(line):
            continue
        out.append(_INLINE_PAGE.sub("", _INLINE_MARK.sub("", line)))
    return "\n".join(out)
