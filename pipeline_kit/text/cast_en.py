"""Which English names are people, and which of them are one person (the rules behind the bible).

Candidates: capitalised words the chapters' mentions call people (McCarthy and O'Brien too), and
speakers, minus places (a name that speaks or laughs is a person wherever else it stands: a
letter from Tobias Venn), sentence-initial words (mostly written in lower case: Had, Having),
households (the Bennets), contractions and stop words. A surname or first
name of exactly one full name joins it; a first name of several full names (John of John Clay
and John Turner) is shared: each bare mention goes to the one the text last named. Epithets join
the person they name by apposition or a naming statement (`Tom Reed, known as the Grey Fox`).
Roles that speak or act ("said the inspector") are people named by the role (`cast_roles`), and
join the person set beside them ("the inspector, Lestrade,").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from pipeline_kit.text.cast_roles import en_apposed_roles, en_role_names, en_roles
from pipeline_kit.text.name_groups import NameGroups, NameSets
from pipeline_kit.text.namings import namings, role_namings
from pipeline_kit.text.names import _EN_PLACE_WORDS, Mentions

THE_SHARE = 0.8  # a word after "the" this often is a thing, a boat or a title, not a person's name

_CAP = r"(?:Mc|Mac|O’|O'|D’|D')?[A-Z][a-z]+"  # a capitalised name word: Holmes, McCarthy, O’Brien
_EN_FULL = re.compile(rf"\b(?=({_CAP}) ({_CAP})\b)")  # overlapping: "Then Alice Brown"
_EN_EPITHET = re.compile(
    rf"\b((?:{_CAP} )?{_CAP}),? (?:was |is )?(?:also |otherwise |better |commonly )?(?:known as|called|named|"
    rf"nicknamed|alias|whom (?:\w+ ){{0,2}}called) (?:the )?((?:{_CAP} ){{0,2}}{_CAP})\b(?! {_CAP}| the {_CAP})"
)
# Someone calls a person by an epithet: "Everyone called Ada Fenn the Owl" (Everyone is the caller).
_EN_CALLED_THE = re.compile(
    rf"\b(?:called|named|nicknamed|dubbed) ((?:{_CAP} )?{_CAP}) the ((?:{_CAP} ){{0,2}}{_CAP})\b"
)
_EN_SPEECH = (
    "said",
    "cried",
    "asked",
    "answered",
    "replied",
    "remarked",
    "observed",
    "whispered",
    "shouted",
    "continued",
    "exclaimed",
    "murmured",
    "added",
)
# What only a person does: speak (said Tobias Venn) or laugh, nod, smile (Tobias Venn laughed).
_EN_ACTS = re.compile(
    rf"\b(?:{'|'.join(_EN_SPEECH)}) ((?:{_CAP} )?{_CAP})\b"
    rf"|\b((?:{_CAP} )?{_CAP}) (?:{'|'.join(_EN_SPEECH)}|laughed|smiled|nodded|sighed|shrugged|frowned|grinned|wept)\b"
)
# A speaker with an article: "said the Heron", "the Heron answered" (an epithet that speaks is a person's).
_EN_SPOKE_THE = re.compile(
    rf"\b(?:{'|'.join(_EN_SPEECH)}) the ((?:{_CAP} )?{_CAP})\b"
    rf"|\b[Tt]he ((?:{_CAP} )?{_CAP}) (?:{'|'.join(_EN_SPEECH)})\b"
)
# Pronouns, sentence-initial words, contractions' stems and forms of address.
_EN_STOP = frozenset(
    """i a an the and but or if so then there here this that these those it its he she they we you
    his her their our your my me him them who what when where why how which yes no not oh ah well
    now mr mrs miss ms dr sir madam lady lord colonel captain inspector doctor professor majesty
    god heaven street road square lane english french german american british monday tuesday
    wednesday thursday friday saturday sunday january february march april may june july august
    september october november december christmas chapter part book one two three four st saint
    city league however still yet perhaps indeed very good come look let pray do did does is was
    were be as at by for from in into of on to up with after before while ha hum said cried asked
    answered replied remarked exclaimed yours sincerely dear father mother mister king queen emperor
    prince princess duke count baron pa ma papa mama mamma ladyship lordship highness excellency
    honour worship""".split()
)
# A place's marks: a preposition of place, a journey's "to" (going to Stoke Moran), or "of" after a
# person's name (the Roylotts of Stoke Moran, Joseph of Arimathea).
_EN_AT_PLACE = re.compile(
    r"\b(?:[Ii]n|[Aa]t|[Ff]rom|[Nn]ear|[Ii]nto|[Tt]hrough|[Tt]owards?|reached"
    r"|(?:come|came|coming|go|goes|going|went|gone|drove|driven|travelled|traveled|returned|back) to"
    r"|[A-Z][a-z]+s?,? of)\s+([A-Z][a-z]+(?: [A-Z][a-z]+)?)\b"
)
_EN_PLACE_END = re.compile(rf"(?:^| )(?:{_EN_PLACE_WORDS}|Valley)$")
_EN_CONTRACTION = re.compile(r"[’'](?:m|ve|ll|d|re|t|s)$")


def en_groups(texts: Sequence[str], found: Sequence[Mentions]) -> NameGroups:
    """People: words the chapters' mentions call people and that are no stop word or contraction,
    the full names they make, and the epithets the text gives them."""
    joined = "\n".join(texts)
    people: Counter[str] = Counter()
    for m in found:
        for name, is_place in zip(m.names, m.is_place):
            if not is_place:
                people[name] += 1
    # A name that speaks or laughs, or that someone is given, is a person even if rarely named, and
    # wherever else it stands (a letter from Tobias Venn).
    acting = {w for m in _EN_ACTS.finditer(joined) for w in (m.group(1) or m.group(2)).split()}
    acting |= {
        w for text in texts for n in namings(text, "en") if not n.called for w in n.name.split()
    }  # "Call me Bess"
    people.update(dict.fromkeys(acting, 0))
    before_place: Counter[str] = Counter()
    for m in _EN_AT_PLACE.finditer(joined):  # "at Stoke Moran" counts for Stoke Moran and for Stoke
        before_place.update({m.group(1), *m.group(1).split()})
    in_place: Counter[str] = Counter()  # Hatherley of Hatherley Farm: a word mostly met in a place's name
    for m in found:
        for name, is_place in zip(m.names, m.is_place):
            if is_place and " " in name:
                in_place.update(name.split())
    capitalised = Counter(re.findall(r"\b[A-Z][\w’']*\b", joined))
    after_the = Counter(re.findall(r"\b[Tt]he ([A-Z][\w’']*)\b", joined))
    lower = Counter(re.findall(r"\b[a-z]+\b", joined))
    inner = Counter(re.findall(r"(?<=[a-z,;] )[A-Z][\w’']*", joined))  # capitalised inside a sentence
    singles = {
        w
        for w in people
        if _en_name_ok(w)
        and _name_word(w, lower, capitalised, inner)
        and (before_place[w] * 4 < joined.count(w) or w in acting)
        and (not in_place[w] or in_place[w] * 2 < joined.count(w))
        and not _EN_PLACE_END.search(w)
        and after_the[w] < THE_SHARE * max(capitalised[w], 1)  # the Heron: a boat, not a person
    }
    singles -= {w for w in singles if _family(w, capitalised, after_the[w])}
    sets = NameSets()

    fulls: Counter[str] = Counter(
        f"{m.group(1)} {m.group(2)}"
        for m in _EN_FULL.finditer(joined)
        if _name_word(m.group(1), lower, capitalised, inner)
        and _name_word(m.group(2), lower, capitalised, inner)
        and (m.group(1) in singles or m.group(2) in singles)
    )
    full_names = {
        f
        for f, n in fulls.items()
        if n >= 2 and not _EN_PLACE_END.search(f) and (before_place[f] * 4 < n or acting & set(f.split()))
    }
    for name in singles | full_names:
        sets.add(name)
    # A full name met once (a short story's "Lucy Brand had crossed…") is its first name's, whole:
    # its surname alone may be a relative's (Mr. Brand), so it joins nobody else.
    firsts = Counter(f.split()[0] for f in fulls)
    once = {
        f
        for f, n in fulls.items()
        if n == 1 and firsts[f.split()[0]] == 1 and f.split()[0] in singles and not _EN_PLACE_END.search(f)
    }  # and the only full name with that first name: John of John Turner and John Hare stays shared
    for full in once:
        sets.join(full.split()[0], full)
    shared: dict[str, set[str]] = {}
    parts: set[str] = set()
    for part, owners in _name_parts(full_names).items():  # Holmes of Sherlock Holmes; John of two Johns
        if part not in singles and not any(part == f.split()[0] for f in owners):
            continue
        if part not in singles and lower[part.lower()]:  # Old of Old Hetty: a common word, no name
            continue
        if len(owners) == 1:
            sets.join(next(iter(owners)), part)
            parts.add(part)
        elif part in singles:
            shared[part] = owners
    names = singles | full_names | parts | once
    for name, epithet in _epithets(joined, names):  # Tom Reed, known as the Grey Fox
        once.discard(name)  # the name an epithet is given is the person's own, whole
        names |= {name, epithet}
        sets.join(name, epithet, *(p for p in name.split() if p in names and p not in shared))
    roles = en_roles(texts)
    known = {role.lower() for role in roles}
    apposed = {role: forms for role, forms in en_apposed_roles(texts).items() if role.lower() not in known}
    shared |= _roles(texts, roles, apposed, sets, names)  # the inspector, our visitor; John Pike, the landlord
    roles |= {role: forms for role, forms in apposed.items() if role in sets.parent or forms & shared.keys()}
    names |= set(sets.parent)
    freq = Counter({n: c for n, c in people.items() if n in names}) + fulls
    groups = [g & names - set(shared) for g in sets.groups()]
    forms = frozenset(form for role in roles.values() for form in role)
    return NameGroups([g for g in groups if g], full_names, freq, shared, roles=forms, once=frozenset(once))


def _roles(
    texts: Sequence[str],
    roles: dict[str, set[str]],
    apposed: dict[str, set[str]],
    sets: NameSets,
    names: set[str],
) -> dict[str, set[str]]:
    """Roles that speak or act (the inspector) as a group of their forms, joined to the one person
    the text sets beside them ("the inspector, Lestrade,"; "John Pike, the landlord,"); a role set
    beside several people is shared by them: its forms -> their names. `apposed` roles, set after a
    name but never speaking or acting often enough, count only where that name is a known one."""
    given: dict[str, set[str]] = {}
    for role, name in en_role_names(texts, roles | apposed, names) + role_namings(texts, roles, names):
        given.setdefault(role, set()).add(name)
    shared = {}
    for role, forms in {**roles, **{r: f for r, f in apposed.items() if r in given}}.items():
        named = given.get(role, set())
        if len({sets.find(n) for n in named}) > 1:
            shared |= {form: named for form in forms}
            continue
        sets.join(role, *forms, *named)
    return shared


def _name_parts(full_names: set[str]) -> dict[str, set[str]]:
    """Each first name and surname -> the full names it is part of."""
    parts: dict[str, set[str]] = {}
    for full in full_names:
        first, last = full.split()
        parts.setdefault(first, set()).add(full)
        parts.setdefault(last, set()).add(full)
    return parts


def _epithets(text: str, names: set[str]) -> list[tuple[str, str]]:
    """(name, epithet) from appositions and naming statements about a known name: `Tom Reed,
    known as the Grey Fox`, `Nell, whom the village called Mother Hollis`; the epithet's `the` left out."""
    out = []
    speakers = {m.group(1) or m.group(2) for m in _EN_SPOKE_THE.finditer(text)}
    for m in [*_EN_EPITHET.finditer(text), *_EN_CALLED_THE.finditer(text)]:
        name, epithet = m.group(1), m.group(2).strip()
        known = name in names or epithet in names or epithet in speakers or any(part in names for part in name.split())
        if known and epithet != name and _phrase_ok(name) and _phrase_ok(epithet):
            out.append((name, epithet))
    return out


def _family(word: str, capitalised: Counter[str], after_the: int) -> bool:
    """`the Bennets`, `the Lucases`: the plural of a name, mostly after "the" or far rarer than the
    name itself, is a household."""
    stems = {word[:-1], word[:-2]} if word.endswith("es") else {word[:-1]} if word.endswith("s") else set()
    stem = max(capitalised[s] for s in stems) if stems else 0
    return stem > 0 and (after_the * 2 >= capitalised[word] or stem >= 10 * capitalised[word])


def _name_word(word: str, lower: Counter[str], capitalised: Counter[str], inner: Counter[str]) -> bool:
    """A word that can be (part of) a name: no stop word, and either mostly capitalised or, when
    its lower case is common, capitalised inside sentences too (said Old Hetty); Had of "Had
    Elizabeth" and Having are capitalised only to open a sentence."""
    many = max(capitalised[word], 1)
    return _en_name_ok(word) and (lower[word.lower()] * 3 < many or inner[word] * 3 >= many)


def _phrase_ok(phrase: str) -> bool:
    """A name or epithet of one or more words: one word no stop word (the Monkey King, not He)."""
    return any(_en_name_ok(w) for w in phrase.split())


def _en_name_ok(word: str) -> bool:
    return word.lower() not in _EN_STOP and not _EN_CONTRACTION.search(word)
