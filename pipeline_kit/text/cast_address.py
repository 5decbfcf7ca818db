"""Gender from being addressed: a kinship word said to someone tells that person's sex.

A quotation that opens or closes with a kinship word, or has one between commas, calls someone
by it (“爹，回家吃饭了！”, “小心，娘！”; "Mother!", "Come home, Father."); "Father says…" or 我娘
speaks of someone. The one called is whom the text's grammar says, else nobody (never guessed):
a known name in the address itself (“秀兰姐，…”, "Uncle Tobias!"), the one the speech tag says
it is said to (对阿Ｋ道, 叫老陈, "said to Tobias"), or the one who answers in the very next clause,
speaking (老陈道：“就来。”; "Yes?" said Kit Venn) or turning to the speaker (Kit Venn turned,
老陈回过头) — never the speaker, and never one named only later or doing something else.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

_ZH_MALE = """爹 爹爹 爸 爸爸 父亲 爷爷 爷 外公 姥爷 哥 哥哥 大哥 二哥 弟弟 叔 叔叔 大叔 伯伯 大伯 舅舅 舅 姑父 姨父
公公 老爷 少爷 公子 大爷 相公"""
_ZH_FEMALE = """娘 妈 妈妈 娘亲 母亲 奶奶 外婆 姥姥 姐 姐姐 大姐 二姐 妹妹 婶 婶婶 婶子 大婶 大娘 姑姑 姑妈 舅妈 姨
阿姨 嫂子 嫂嫂 大嫂 婆婆 姑娘 小姐 夫人 太太 娘子"""
_EN_MALE = "Father Papa Pa Dad Daddy Grandpa Grandfather Grandad Uncle Brother"
_EN_FEMALE = "Mother Mama Mamma Ma Mum Mummy Mom Granny Grandma Grandmother Aunt Auntie Sister"
_KIN = {
    "zh": {**dict.fromkeys(_ZH_MALE.split(), "male"), **dict.fromkeys(_ZH_FEMALE.split(), "female")},
    "en": {**dict.fromkeys(_EN_MALE.split(), "male"), **dict.fromkeys(_EN_FEMALE.split(), "female")},
}
_ZH_KIN_BODY = "|".join(sorted(_KIN["zh"], key=len, reverse=True))
_EN_KIN_BODY = "|".join(f"[{w[0]}{w[0].lower()}]{w[1:]}" for w in sorted(_KIN["en"], key=len, reverse=True))
# The address: at the quotation's start or after a comma, and before a comma, a stop or its end
# (爹，…; …，娘！; Mother!; Come home, father.), a name before it (秀兰姐) or after it (Uncle Tobias).
_ZH_CALL = re.compile(rf"(?:^|(?<=[，,]))([\u4e00-\u9fff]{{0,3}}?)({_ZH_KIN_BODY})(?=[，,！!？?。…]|$)")
_EN_CALL = re.compile(
    rf"(?:^|(?<=, ))(?:(?:[Oo]h|[Dd]ear|[Mm]y),? )?({_EN_KIN_BODY})(?: ([A-Z][\w’'-]+))?(?=[,!?.;—]|$)"
)
_QUOTE = re.compile(r"“([^”]*)”|「([^」]*)」|\"([^\"]*)\"")

_EN_SAYS = "said|cried|called|asked|answered|replied|shouted|whispered|exclaimed|murmured|begged|pleaded"
_EN_TITLE = r"(?:(?:Mr|Mrs|Miss|Ms|Dr)\.? )?"
# A tag after the quotation: ", said Ann Lowry", " she said", " Ann cried".
_EN_WHO = rf"(?:he|she|I|{_EN_TITLE}[A-Z][\w’'-]+(?: [A-Z][\w’'-]+)?)"
_EN_TAG_AFTER = re.compile(rf"\s*,?\s*(?:(?:{_EN_SAYS}) {_EN_WHO}|{_EN_WHO} (?:{_EN_SAYS}))\b")
_EN_TO = re.compile(rf"\b(?:{_EN_SAYS}|turned|went|ran) (?:\w+ )?to {_EN_TITLE}$")
_EN_ANSWERS = re.compile(
    rf"(?:\s+\w+ly)?\s+(?:{_EN_SAYS}|turned|looked up|looked round|looked around|nodded|came|stopped|glanced)\b"
)
_EN_OPENER = re.compile(rf"[\s,;.!?]*(?:(?:and|then) )?{_EN_TITLE}")
_ZH_SAYS = r"(?:[道说问答叫喊应骂]|说道|问道|答道|叫道|喊道)[：:]\s*[“「]"
_ZH_ANSWERS = re.compile(
    rf"[^。！？“”」]{{0,12}}?(?:{_ZH_SAYS}|回头|回过头|转身|转过身|抬头|抬起头|答应|应了一声|应声)"
)
_ZH_TO = re.compile(r"[对向朝冲叫跟]")  # the one before it is spoken to: 对阿Ｋ道
_EN_BREAK = re.compile(r"(?<!Mr)(?<!Mrs)(?<!Ms)(?<!Dr)[.!?]|[”\"\n]")
_ZH_GAP = re.compile(r"[\s，,。]*")
# A tag after the quotation: “爹！”秀兰叫道。
_ZH_TAG_AFTER = re.compile(r"[^。！？“”」\n]{0,6}?(?:说道|叫道|喊道|问道|道|说|叫|喊|问)[。，,！]")
_TAG_AFTER = {"zh": _ZH_TAG_AFTER, "en": _EN_TAG_AFTER}


def addressed_genders(
    texts: Sequence[str], lang: str, spans: Sequence[Sequence[tuple[int, int, str]]]
) -> dict[str, str]:
    """Character -> the sex the kinship words said to it tell, where they all tell one; `spans` are
    each text's (start, end, canonical name) mentions."""
    said: dict[str, set[str]] = defaultdict(set)
    for text, found in zip(texts, spans):
        at = {start: (end, name) for start, end, name in found}
        for m in _QUOTE.finditer(text):
            body_at = next(k for k in (1, 2, 3) if m.group(k) is not None)
            called = _called(m.group(body_at), m.start(body_at), lang, at)
            if called is None:
                continue
            sex, named = called
            speaker, tag_end = _speaker(text, m.start(), m.end(), lang, at)
            who = named or _said_to(text, m.start(), m.end(), tag_end, lang, at) or _answer(text, tag_end, lang, at)
            if who is not None and who != speaker:
                said[who].add(sex)
    return {name: next(iter(sexes)) for name, sexes in said.items() if len(sexes) == 1}


def _called(body: str, offset: int, lang: str, at: dict[int, tuple[int, str]]) -> tuple[str, str | None] | None:
    """(sex, the known name said with the kinship word, if any) of the first address in a quotation."""
    if lang == "zh":
        m = _ZH_CALL.search(body)
        if m is None:
            return None
        lead = m.group(1)  # 秀兰姐: the name before the word; 我娘 is no address
        named = next((at[k][1] for k in range(offset + m.start(1), offset + m.end(1)) if k in at), None)
        if lead and named is None:
            return None
        return _KIN["zh"][m.group(2)], named
    m = _EN_CALL.search(body)
    if m is None:
        return None
    named = at[offset + m.start(2)][1] if m.group(2) and offset + m.start(2) in at else None
    return _KIN["en"][m.group(1).capitalize()], named


def _speaker(text: str, start: int, end: int, lang: str, at: dict[int, tuple[int, str]]) -> tuple[str | None, int]:
    """Who says the quotation (the name in its tag, after it or before it in its sentence) and
    where its tag ends (“爹！”秀兰叫道。; "Mother!" cried Ann; 秀兰叫道：“爹！”)."""
    tag = _TAG_AFTER[lang].match(text, end)
    if tag:
        return next((at[k][1] for k in range(end, tag.end()) if k in at), None), tag.end()
    before = max(_last_break(text, start), 0)
    for k in range(before, start):
        if k in at and not (lang == "zh" and k > 0 and _ZH_TO.match(text, k - 1)):
            return at[k][1], end
    return None, end


def _said_to(text: str, start: int, end: int, tag_end: int, lang: str, at: dict[int, tuple[int, str]]) -> str | None:
    """The one the speech tag says the quotation is said to: 对阿Ｋ道：“…”, "…," said Ann to Kit."""
    if lang == "zh":
        before = max(_last_break(text, start), 0)
        return next((at[k][1] for k in range(before, start) if k in at and k > 0 and _ZH_TO.match(text, k - 1)), None)
    stop = _EN_BREAK.search(text, tag_end)
    for k in range(end, stop.start() if stop else len(text)):
        if k in at and _EN_TO.search(text, max(0, k - 40), k):
            return at[k][1]
    return None


def _answer(text: str, tag_end: int, lang: str, at: dict[int, tuple[int, str]]) -> str | None:
    """The one who answers in the very next clause: speaking, or turning to the speaker. A quotation
    the tag goes on into (“爹，”秀兰道，“回家吧。”; "Father," said Nell, "come.") is still the speaker's."""
    gap = _ZH_GAP if lang == "zh" else _EN_OPENER
    k = gap.match(text, tag_end).end()  # type: ignore[union-attr]
    goes_on = _QUOTE.match(text, k) if re.search("[,，]", text[max(0, tag_end - 1) : k]) else None
    if goes_on:
        k = gap.match(text, goes_on.end()).end()  # type: ignore[union-attr]
    quote = _QUOTE.match(text, k)
    if quote:  # the next quotation: who says it
        return _speaker(text, quote.start(), quote.end(), lang, at)[0]
    answers = _ZH_ANSWERS if lang == "zh" else _EN_ANSWERS
    return at[k][1] if k in at and answers.match(text, at[k][0]) else None


def _last_break(text: str, start: int) -> int:
    """Where the sentence holding `start` begins (after the last stop, quotation or line before it)."""
    return max(text.rfind(mark, 0, start) for mark in "。！？!?”」\n.") + 1
