"""A book's language from the scripts its letters are written in: Chinese (zh) and English (en)
are the languages the splitter's rules read; a text written in another script (Japanese kana,
Korean Hangul, Cyrillic, ...) is refused in one line rather than stored under the wrong tag."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from pipeline_kit.errors import BadInput

LANGS = ("zh", "en")
LANG_NAMES = {"zh": "Chinese", "en": "English"}
SUPPORTED = "Chinese (zh) and English (en)"
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
_HAN_RUN = re.compile(_HAN.pattern + "+")
_KANA = re.compile(r"[\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fd-\u30ff\u31f0-\u31ff\uff66-\uff9d]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3131-\u318e]")
_LATIN = re.compile(r"[A-Za-z]")
_OTHER = re.compile(
    r"[^\x00-\x7f\u3000-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)
_SAMPLE = 200_000
CJK_WEIGHT = 5  # a Han (kana, Hangul) character carries about as much as five letters
KANA_SHARE = 0.1  # Japanese: at least this share of its Han and kana characters is kana
SCRIPT_LANGS = {"KANA": "Japanese", "HANGUL": "Korean"}


def scripts(text: str) -> Counter[str]:
    """Letters of the text's first _SAMPLE characters by script: HAN, KANA, HANGUL, LATIN, and
    other scripts by the first word of their Unicode names (CYRILLIC, GREEK, ARABIC, ...)."""
    sample = text[:_SAMPLE]
    found: Counter[str] = Counter(
        HAN=len(_HAN.findall(sample)),
        KANA=len(_KANA.findall(sample)),
        HANGUL=len(_HANGUL.findall(sample)),
        LATIN=len(_LATIN.findall(sample)),
    )
    for ch in _OTHER.findall(sample):
        if ch.isalpha():
            found[unicodedata.name(ch, "UNKNOWN").split()[0]] += 1
    return +found


def detect_lang(text: str) -> str:
    """'zh' for text written in Han characters, 'en' for text in Latin letters (or none). Other
    writing is refused: Japanese (a tenth or more of its Han and kana is kana), Korean, or a
    non-Latin alphabet; so is an unknown script. Han and kana count five times a letter."""
    found = scripts(text)
    han, kana, hangul = found["HAN"], found["KANA"], found["HANGUL"]
    letters = sum(n for script, n in found.items() if script not in ("HAN", "KANA", "HANGUL"))
    if (han + kana + hangul) * CJK_WEIGHT >= max(letters, 1):
        if hangul > han + kana:
            raise _refusal("HANGUL")
        if kana >= KANA_SHARE * (han + kana):
            raise _refusal("KANA")
        return "zh"
    others = {script: n for script, n in found.items() if script not in ("HAN", "KANA", "HANGUL", "LATIN")}
    if found["LATIN"] >= sum(others.values()):
        return "en"
    raise _refusal(max(others, key=others.__getitem__))


def _refusal(script: str) -> BadInput:
    what = SCRIPT_LANGS.get(script) or f"written in the {script.title()} script"
    return BadInput(f"the text is {what}: pipeline_kit makes films of {SUPPORTED} books only")


def check_lang(code: str) -> str:
    """A language code as given (--lang): zh or en, else refused saying which codes there are."""
    if code not in LANGS:
        raise BadInput(
            f"a book's language is zh (Chinese) or en (English), the languages pipeline_kit splits; got {code!r}"
        )
    return code


def han_count(text: str) -> int:
    """Number of Han characters: the unit of Chinese shot length (counted by runs: fewer matches)."""
    return sum(map(len, _HAN_RUN.findall(text)))
