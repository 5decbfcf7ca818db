"""A shot's spoken lines and subtitles: each speaker's words when it has dialogue, else its
narration.

`spoken_lines` is what the voice tasks say, each line attributed to the character who says it
(None: the narrator, or a speaker the book's cast does not hold). The speaker is the one the
narration names by any of its names (三藏道, 行者笑道：“…”; "said Holmes", "Holmes said"), a
pronoun's fitting character (他道, "said he"), the one still speaking (又道, a speech running on
into the next paragraph), or, for a line no narration tags, the other of two people talking in
turn, reading the chapter's talk before the shot. A subtitle must be readable,
so a long line is shown as several cues (`cue_texts`: at most SUBTITLE_CHARS per language each,
broken at sentence ends, else at words or, in Chinese, characters), never cut, whether the
shot is voiced or not.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pipeline_kit.ornaments import without_ornaments

SUBTITLE_CHARS = {"zh": 36, "en": 84}
CONTEXT_CHARS = 4000  # of the chapter before a shot: its last speakers (a page or two of talk)
_QUOTED = re.compile(r"“([^”]+)(?:”|\Z)|\"([^\"]+)\"|「([^」]+)」|『([^』]+)』")  # “ may run on
_CLOSING = ("”", '"', "」", "』")
GOES_ON = "+"  # the hint of a turn going on with the speech the paragraph before left open
_PARAGRAPH = re.compile(r"\n\s*\n|\n(?=[ \t\u3000])")
_INTRODUCED = re.compile(r"[：:]\s*$")  # 张飞曰： right before a quote: someone new speaks
_SENTENCE_END = re.compile(r"[.!?。！？…]+[\"”’」』)]*")
_TAG_END = re.compile(r"(?<!Mr)(?<!Mrs)(?<!Ms)(?<!Dr)[.!?。！？…]+[\"”’」』)]*")  # "said Mr. Holmes." ends once
# Who says a quote in English narration: "said Tom", "Tom said", "Mr. Holmes asked", "said the
# clerk" (a name, a pronoun or a described person, with the verb on either side).
_VERBS = (
    r"(?:said|says|asked|asks|replied|cried|answered|shouted|whispered|called|added|muttered|remarked|"
    r"observed|returned|exclaimed|continued|murmured|repeated|interrupted|explained|groaned|sighed|"
    r"laughed|insisted|protested|suggested|responded|began|went on)"
)
_WHO = (
    r"((?:Mr\.|Mrs\.|Miss|Dr\.)?\s?[A-Z][\w'-]+(?:\s[A-Z][\w'-]+)?|he|she|I|they|we"
    r"|(?:the|my|our|his|her|a|an)\s[a-z]+(?:\s[a-z]+)?)"
)
_SAID = re.compile(rf"\b{_VERBS}\s+{_WHO}|{_WHO}\s+{_VERBS}\b")
_TITLE = re.compile(r"^(?:mr|mrs|miss|ms|dr|sir|lady|lord)\.?\s+")
_PRONOUN = {"he": "male", "she": "female", "他": "male", "她": "female"}
_FIRST_PERSON = {"en": "i", "zh": "我"}
# Chinese speech tags: the words between the speaker and the quote (三藏笑道：, 行者闻言大怒，喝道：).
_ZH_VERB = r"(?:笑道|说道|问道|答道|叫道|喝道|骂道|嚷道|哭道|叹道|道|曰|说|问|答|叫|喝|骂|云|嚷|喊|令)"
_ZH_STILL = re.compile(rf"^[又便也却才就即乃遂只方忙急因再复接着还]*(?:大?笑|冷笑|陪笑|欢喜|叹)?{_ZH_VERB}?[:：]?$")
# 对行者道, 站在佛祖手心: 行者 is spoken to, 佛祖 is a place; 殷丞相府上: a place; 菩萨、金刚等众: a crowd
_ZH_OBJECT_BEFORE = "了与和对把被叫向见跟同给请问拜随着将令教唤望朝骂打在于到至"
_ZH_OWNED_AFTER = "府家之的"
_ZH_MANY_AFTER = "、等诸众"
_ZH_CLAUSE = re.compile(r"[，,；;：:]")
_ZH_SENTENCE = re.compile(r"[。！？!?…\n]")


def subtitles(text: str, *, dialogue: bool, lang: str) -> list[str]:
    """What to show under the shot, one entry per cue: in a dialogue shot each speaker's quoted
    words on their own, else the narration; a long line as several cues (`cue_texts`), so
    nothing is cut. Scene-break ornaments are never shown."""
    text = without_ornaments(text)
    spoken = [joined(turn, lang) for turn in speech_turns(text, lang)] if dialogue else []
    return [cue for line in spoken or [text] for cue in cue_texts(line, lang) if cue]


@dataclass(frozen=True)
class Speakers:
    """The book's cast as its text names them: every name and alias -> the characters going by it
    (several for a shared title), and each character's gender (None: unknown)."""

    holders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    genders: Mapping[str, str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, cast: Iterable[tuple[str, Sequence[str], str | None]]) -> Speakers:
        """From (name, aliases, gender) of each character in the cast."""
        holders: dict[str, list[str]] = {}
        genders: dict[str, str | None] = {}
        for name, aliases, gender in cast:
            genders[name] = gender
            for alias in dict.fromkeys((name, *aliases)):
                holders.setdefault(alias, []).append(name)
        return cls({k: tuple(v) for k, v in holders.items()}, genders)

    def named(self, name: str, characters: Sequence[str]) -> str | None:
        """The character `name` is: its only holder, else the holder that is in the shot."""
        found = self.holders.get(name, ())
        if len(found) == 1:
            return found[0]
        inside = [c for c in found if c in characters]
        return inside[0] if len(inside) == 1 else None

    @cached_property
    def folded(self) -> dict[str, str]:
        """Each name and alias, case-folded (for English narration) -> itself."""
        return {alias.casefold(): alias for alias in self.holders}

    @cached_property
    def pattern(self) -> re.Pattern[str] | None:
        """Any name or alias, longest first (for Chinese narration, written without spaces)."""
        return _names_pattern(list(self.holders))

    @cached_property
    def _words(self) -> re.Pattern[str] | None:
        """Any name or alias but the narrator's I, as a whole word (for English narration)."""
        names = sorted((n for n in self.holders if n != "I"), key=len, reverse=True)
        return re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b") if names else None

    def mentioned(self, text: str, lang: str) -> list[str]:
        """The characters `text` names, in order (a name several hold is left out)."""
        key = ("mentioned", text, lang)
        if key not in self._seen:
            pattern = self.pattern if lang == "zh" else self._words
            found = [self.holders[m.group()] for m in pattern.finditer(text)] if pattern and text else []
            self._seen[key] = [names[0] for names in found if len(names) == 1]
        return self._seen[key]

    @cached_property
    def _seen(self) -> dict[tuple[Any, ...], Any]:
        """Answers already worked out against this cast: a shot reads again the turns its
        neighbours read (the chapter before it, `CONTEXT_CHARS`), so a split asks each once."""
        return {}

    def tagged(self, hint: str, lang: str, characters: Sequence[str]) -> tuple[str | None, str]:
        """`_tagged` of a turn's hint, worked out once per hint and shot cast."""
        key = ("tagged", hint, lang, tuple(characters))
        if key not in self._seen:
            self._seen[key] = _tagged(hint, lang, characters, self)
        return self._seen[key]


@dataclass(frozen=True)
class Line:
    """One speaker turn to voice: who says it (a character of the book; None: nobody the cast
    holds), or the narration of a shot without dialogue."""

    speaker: str | None
    text: str
    narration: bool = False


def spoken_lines(
    text: str,
    *,
    dialogue: bool,
    lang: str,
    characters: Sequence[str] = (),
    speakers: Speakers | None = None,
    before: str = "",
) -> list[Line]:
    """What a shot says aloud: each speaker turn of a dialogue shot, attributed to its speaker
    (see the module docstring; `characters`: the shot's, `speakers`: the book's cast, `before`:
    the chapter up to the shot, whose last CONTEXT_CHARS tell who was talking); else (or with no
    quote found) the narration."""
    text = without_ornaments(text)
    turns = attributed_turns(text, lang) if dialogue else []
    if turns:
        speakers = speakers or Speakers()
        told = _all_named(turns, lang, characters, speakers)
        earlier = [] if told else attributed_turns(without_ornaments(_recent(before)), lang)
        who = attribute([*earlier, *turns], lang, characters, speakers, since=len(earlier))
        return [Line(name, joined(turn.pieces, lang)) for name, turn in zip(who, turns)]
    told = _flat(text, lang)
    return [Line(None, told, narration=True)] if told else []


def _recent(before: str) -> str:
    """The last CONTEXT_CHARS of `before`, from a line's start (no quote is cut in two)."""
    if len(before) <= CONTEXT_CHARS:
        return before
    tail = before[-CONTEXT_CHARS:]
    return tail[tail.find("\n") + 1 :] if "\n" in tail else ""


def speech_turns(text: str, lang: str) -> list[list[str]]:
    """The quoted pieces of `text` grouped by speaker (see `attributed_turns`)."""
    return [turn.pieces for turn in attributed_turns(text, lang)]


@dataclass(frozen=True)
class Turn:
    """One speaker's quoted pieces, a hint of who says them (see `attributed_turns`) and the
    narration since the turn before (whom it names may be a pronoun's speaker)."""

    hint: str
    pieces: list[str]
    told: str = ""


def attributed_turns(text: str, lang: str) -> list[Turn]:
    """The quoted pieces of `text` grouped by speaker.

    A new paragraph is a new speaker (a line in Chinese, a blank-line block or an indented line
    in English) unless it goes on with a quotation the paragraph before left open (the way a long
    speech runs over paragraphs); in Chinese so is a quote opened after a colon (张飞曰：“…”), the
    way a second speaker is brought in within one line; in English so is a quote whose narration
    names another speaker than the quote before it ("Yes," said Tom. "No," said Mary.; not a
    pronoun: "Yes," said Tom. "Go," said he. is Tom's).
    Each turn comes with a hint of who says it: the speaker's name in English narration
    (lower-case), the narration before the turn in Chinese ("" when none), GOES_ON for a speech
    going on from the paragraph before.
    """
    paragraphs = text.split("\n") if lang == "zh" else _PARAGRAPH.split(text)
    turns: list[Turn] = []
    told, left_open = "", False
    for paragraph in paragraphs:
        found, told, left_open = _paragraph_turns(paragraph, lang, told, left_open)
        turns += found
    return turns


@functools.lru_cache(maxsize=4096)
def _paragraph_turns(paragraph: str, lang: str, told: str, left_open: bool) -> tuple[tuple[Turn, ...], str, bool]:
    """One paragraph's turns (see `attributed_turns`), given the narration since the last turn
    and whether the paragraph before left a quotation open; with both, as they stand after it.
    Kept for the paragraphs read last: each shot reads again the chapter just before it."""
    quotes = list(_QUOTED.finditer(paragraph))
    turns: list[Turn] = []
    turn: list[str] = []
    last_speaker, hint, lead = None, "", ""
    for i, match in enumerate(quotes):
        before = paragraph[quotes[i - 1].end() if i else 0 : match.start()]
        after = paragraph[match.end() : quotes[i + 1].start() if i + 1 < len(quotes) else len(paragraph)]
        said = match.group(match.lastindex or 0).strip()  # the one group of the marks that matched
        speaker = None if lang == "zh" else _speaker(said, before, after)
        if turn and (
            (lang == "zh" and _INTRODUCED.search(before))
            or (speaker and last_speaker and speaker != last_speaker and not {speaker, last_speaker} & _PRONOUN.keys())
        ):
            turns.append(Turn(hint, turn, lead))
            turn, last_speaker, told = [], None, ""
        if not turn:
            hint, lead = before, told + before
        turn.append(said)
        if speaker and (last_speaker is None or last_speaker in _PRONOUN):
            last_speaker = speaker
        if lang != "zh":
            hint = last_speaker or ""
    if turn and left_open and not last_speaker and not paragraph[: quotes[0].start()].strip():
        hint = GOES_ON
    if turn:
        turns.append(Turn(hint, turn, lead))
        told = paragraph[quotes[-1].end() :]
    else:
        told += "\n" + paragraph
    left_open = bool(quotes) and quotes[-1].end() == len(paragraph) and not quotes[-1].group().endswith(_CLOSING)
    return tuple(turns), told, left_open


def attribute(
    turns: Sequence[Turn], lang: str, characters: Sequence[str], speakers: Speakers, since: int = 0
) -> list[str | None]:
    """The speaker of each turn from `since` on (the turns before it were said before the shot:
    they tell who is talking; see `attributed_turns`): the character its hint names (a pronoun:
    see `_by_pronoun`); for 又道 or a speech going on the one speaking before; for a turn no
    narration tags, the other of the two who spoke just before or just after it (people talk in
    turn), else the other of the shot's only two characters."""
    start = _settled(turns, since, lang, characters, speakers)
    found = [speakers.tagged(turn.hint, lang, characters) for turn in turns[start:]]
    who: list[str | None] = []
    for k, (name, how) in enumerate(found, start):
        if how == "again":
            name = who[-1] if who else None
        elif how == "pronoun" and name is not None:
            name = _by_pronoun(name, lang, characters, speakers, who, _named_before(turns[: k + 1], lang, speakers))
        who.append(name)
    hows = [how for _, how in found]
    for order in (range(len(who)), range(len(who) - 1, -1, -1)):
        step = 1 if order.step > 0 else -1
        for k in order:
            if who[k] is not None:
                continue
            if hows[k] == "untagged":
                who[k] = _in_turn(who, hows, k, step, characters)
            elif 0 <= k - step < len(who) and hows[max(k, k - step)] == "again":  # one speech, two turns
                who[k] = who[k - step]
    return who[since - start :]


def _settled(turns: Sequence[Turn], since: int, lang: str, characters: Sequence[str], speakers: Speakers) -> int:
    """The first turn `attribute` needs to read for the turns from `since` on: the first of the
    last three turns in a row before `since` whose narration names who says them (0 if none).

    What was said earlier cannot reach past them: a named turn's speaker is what its narration
    says, whatever came before, and is never filled in going forward; a turn whose speaker is not
    named looks back at most three turns (又道 one, people talking in turn two, a pronoun three).
    So a shot reads the few turns of talk that matter, not the whole page before it."""
    run = 0
    for k in range(since - 1, -1, -1):
        run = run + 1 if speakers.tagged(turns[k].hint, lang, characters)[1] == "named" else 0
        if run == 3:
            return k
    return 0


def _all_named(turns: Sequence[Turn], lang: str, characters: Sequence[str], speakers: Speakers) -> bool:
    """Does the narration name who says each of the turns (三藏道, 行者笑道)? Then `attribute` gives
    each the speaker its narration names, whatever was said before (nothing is filled in next to
    a named turn): most of 西游记's dialogue shots need none of the talk before them."""
    return all(speakers.tagged(turn.hint, lang, characters)[1] == "named" for turn in turns)


def _named_before(turns: Sequence[Turn], lang: str, speakers: Speakers) -> Iterator[str]:
    """The cast as the narration up to the end of `turns` names them, latest first (read only as
    far as a pronoun's speaker is looked for)."""
    for turn in reversed(turns):
        yield from reversed(speakers.mentioned(turn.told, lang))


def _in_turn(who: list[str | None], hows: list[str], k: int, step: int, characters: Sequence[str]) -> str | None:
    """Who answers at turn k, from the turns before it (`step` 1) or after it (-1): the one two
    turns away when the turn next to it was someone else (a character, or a person the cast lacks
    whom the narration named), else the other of the shot's only two characters."""
    one, two = k - step, k - 2 * step
    if not 0 <= one < len(who):
        return None
    last, earlier = who[one], who[two] if 0 <= two < len(who) else None
    if earlier is not None and earlier != last and (last is not None or hows[one] == "named"):
        return earlier
    others = [c for c in characters if c != last]
    return others[0] if last is not None and len(characters) == 2 and len(others) == 1 else None


def _tagged(hint: str, lang: str, characters: Sequence[str], speakers: Speakers) -> tuple[str | None, str]:
    """(speaker, how the hint tells it): "named" (a character, or None when the narration names
    someone the cast does not hold), "pronoun" (the pronoun), "again" (the one speaking before),
    "untagged" (nothing)."""
    if hint == GOES_ON:
        return None, "again"
    if lang == "zh":
        return _tagged_zh(hint.strip(), characters, speakers)
    if not hint:
        return None, "untagged"
    if hint in _PRONOUN or (hint == "i" and "I" not in speakers.holders):
        return hint, "pronoun"
    folded = speakers.folded
    bare = _TITLE.sub("", hint)
    for key in (hint, bare, bare.split()[-1]):
        if key in folded and (name := speakers.named(folded[key], characters)):
            return name, "named"
    for name in characters:  # a shot's character the cast has not (a book without a bible)
        words = name.casefold().split()
        if hint == name.casefold() or bare in words or bare.split()[-1:] == words[-1:]:
            return name, "named"
    return None, "named"


def _tagged_zh(hint: str, characters: Sequence[str], speakers: Speakers) -> tuple[str | None, str]:
    """A Chinese turn's speaker: in the sentence before the quote, the first name opening a
    clause (not one spoken to, a place or an owner: 对行者道, 在佛祖手心, 丞相府), from the clause of
    the speech verb backwards; nobody for a crowd (菩萨、金刚等众曰)."""
    if speakers.holders:  # the book's cast: what the hint names depends on it alone
        key = ("zh hint", hint)
        if key not in speakers._seen:
            speakers._seen[key] = _zh_hint(hint, speakers.pattern)
        found, how = speakers._seen[key]
    else:
        found, how = _zh_hint(hint, _names_pattern(characters))
    if how == "named" and found is not None:
        return speakers.named(found, characters) or (found if found in characters else None), how
    return found, how


def _zh_hint(hint: str, pattern: re.Pattern[str] | None) -> tuple[str | None, str]:
    """What a Chinese turn's hint says of its speaker (see `_tagged_zh`): the name it gives as
    written (None for a crowd), a pronoun, "again" or "untagged"."""
    sentence = _ZH_SENTENCE.split(hint.strip().rstrip("：:，, \u3000"))[-1] if hint.strip() else ""
    if not sentence:
        return None, "untagged"
    if _ZH_STILL.match(sentence):
        return None, "again"
    for clause in reversed(_ZH_CLAUSE.split(sentence)):
        for m in pattern.finditer(clause) if pattern else ():
            lead, tail = clause[m.start() - 1 : m.start()], clause[m.end() : m.end() + 1]
            if (lead and lead in _ZH_OBJECT_BEFORE) or (tail and tail in _ZH_OWNED_AFTER):
                continue
            if tail and tail in _ZH_MANY_AFTER:
                return None, "named"  # several speak at once
            return m.group(), "named"
        pronoun = re.match(r"^(?:那|这)?([他她])", clause)
        if pronoun:
            return pronoun.group(1), "pronoun"
    return None, "named"


def _names_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    """Any of `names`, longest first."""
    ordered = sorted(names, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, ordered))) if ordered else None


def _by_pronoun(
    pronoun: str,
    lang: str,
    characters: Sequence[str],
    speakers: Speakers,
    before: Sequence[str | None],
    named: Iterable[str],
) -> str | None:
    """Who a pronoun (he, she, 他, 她; I in a book without a narrator) speaking a turn is, never
    the narrator (he says I) nor the speaker of the turn just before (a reply): one of its gender
    who spoke in the two turns before that, else the shot's only character of its gender (of any,
    with no genders known), else the last one of its gender the narration named (`named`: the
    cast as the narration named them, latest first)."""
    gender = _PRONOUN.get(pronoun)
    if gender is None:  # I, in a book whose narrator the bible does not know
        return characters[0] if len(characters) == 1 else None
    narrator = speakers.holders.get("I" if lang == "en" else _FIRST_PERSON["zh"], ())
    last = before[-1] if before else None

    def fits(name: str | None, known: bool = True) -> bool:
        return (
            bool(name)
            and name != last
            and name not in narrator
            and (speakers.genders.get(name or "") == gender or not known)
        )

    replying = next((n for n in reversed(before[-3:-1]) if fits(n)), None)
    if replying:
        return replying
    known = any(speakers.genders.get(c) for c in characters)
    shot = [c for c in characters if fits(c, known)]
    if len(shot) == 1:
        return shot[0]
    return next((n for n in named if fits(n)), None)


def _speaker(said: str, before: str, after: str) -> str | None:
    """Who speaks the quote `said`, lower-cased, from the narration around it (None: not said).

    The narration after a quote names its speaker up to the first sentence end ("Yes," said Tom.),
    or, with no sentence end, when the quote itself did not end one ("Wait," she said, "...");
    else the narration after belongs to the next quote, and the speaker is named in the last
    sentence before this one (Tom said, "Go.").
    """
    end = _TAG_END.search(after)
    if end:
        own = after[: end.end()]
    else:
        own = "" if _SENTENCE_END.fullmatch(said[-1:]) else after
    lead = _SENTENCE_END.split(before)[-1]
    found = _SAID.search(own) or _SAID.search(lead)
    if found is None:
        return None
    return next(g for g in found.groups() if g).strip().lower()


def joined(pieces: list[str], lang: str) -> str:
    """Speech broken by narration ("Wait," she said, "not yet.") read as one line.

    A piece ending in a comma ends a sentence unless the next piece goes on in lower case.
    """
    if lang == "zh":
        return "".join(pieces)
    out = ""
    for piece, after in zip(pieces, [*pieces[1:], ""]):
        if piece.endswith(",") and not after[:1].islower():
            piece = piece[:-1] + "."
        out += (" " if out else "") + piece
    return out


def _flat(text: str, lang: str) -> str:
    """`text` on one line (Chinese loses its spaces, other scripts keep one between words)."""
    return re.sub(r"\s+", "" if lang == "zh" else " ", text.replace("_", "")).strip()


def cue_texts(text: str, lang: str) -> list[str]:
    """`text` as consecutive cues of at most SUBTITLE_CHARS[lang] characters each, of about equal
    length (no one-word cue left at the end), broken at the last sentence end past half a cue,
    else at a word (Latin) or a character (Chinese); nothing is dropped."""
    rest = _flat(text, lang)
    most = SUBTITLE_CHARS.get(lang, SUBTITLE_CHARS["en"])
    count = max(1, -(-len(rest) // most))  # cues needed
    limit = min(most, -(-len(rest) // count) + most // 8)  # each one's fair share, and some slack
    cues: list[str] = []
    while len(rest) > limit:
        head = rest[:limit]
        ends = [m.end() for m in _SENTENCE_END.finditer(head)]
        if ends and ends[-1] >= limit // 2:
            cut = ends[-1]
        elif lang != "zh" and " " in head[limit // 2 :]:
            cut = head.rindex(" ")
        else:
            cut = limit
        cues.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    return [*cues, rest] if rest else cues
