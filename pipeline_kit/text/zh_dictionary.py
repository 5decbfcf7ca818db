"""jieba's dictionary as the Chinese name finder reads it, each part cached in the temp
directory (keyed by the dictionary's path, size and mtime), as jieba caches its own.

`lexicon`: its words tagged as people or places, all in memory (the scan looks up every position
of a text). `cut`: jieba's cut without its HMM, over word frequencies read one at a time from an
indexed copy of the dictionary: the names of a whole book are confirmed with about 10,000 of its
498,000 entries, where loading them all (and importing jieba) took 0.55 s and 60 MB.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import re
import sqlite3
import tempfile
import threading
from collections.abc import Iterable, Iterator
from functools import lru_cache
from math import log
from pathlib import Path
from typing import Any

_UNSEEN = -1  # no word has this frequency
_BATCH = 500  # words read in one statement
# jieba's own patterns (jieba/__init__.py: re_han_default, re_skip_default, re_eng).
_BLOCK = re.compile("([\u4e00-\u9fd5a-zA-Z0-9+#&\\._%\\-]+)")
_SKIP = re.compile("(\r\n|\\s)")
_LATIN = re.compile("[a-zA-Z0-9]")


@lru_cache(maxsize=1)
def lexicon() -> tuple[dict[str, bool], frozenset[str]]:
    """jieba's dictionary words tagged `nr*`/`ns` (2-4 characters) -> tagged ns; and their 2-char prefixes."""
    cache = _cache_path("names", "pickle")
    try:
        words: dict[str, bool] = pickle.loads(cache.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError):
        words = {}
        with _dictionary_path().open("rb") as handle:
            for raw in handle:
                parts = raw.decode("utf-8").split()
                if len(parts) == 3 and 2 <= len(parts[0]) <= 4 and (parts[2].startswith("nr") or parts[2] == "ns"):
                    words[parts[0]] = parts[2] == "ns"
        _write(cache, lambda tmp: tmp.write_bytes(pickle.dumps(words)))
    return words, frozenset(w[:2] for w in words)


def cut(text: str) -> Iterator[str]:
    """The words of `text` exactly as `jieba.cut(text, HMM=False)` gives them (jieba 0.42's
    algorithm: the most probable path through the dictionary's words, Latin letters and digits
    kept together, anything else outside a block one character at a time)."""
    for block in _BLOCK.split(text):
        if not block:
            continue
        if _BLOCK.match(block):
            yield from _cut_block(block, frequencies())
            continue
        for piece in _SKIP.split(block):
            if _SKIP.match(piece):
                yield piece
            else:
                yield from piece


def read_ahead(texts: Iterable[str]) -> None:
    """Read, a few statements in all, every frequency `cut` of these texts will look up: the
    fragments each word graph tries, a character longer at each round while the shorter one is a
    word or a prefix (one read per fragment cost 60% of confirming a book's names)."""
    freq = frequencies()
    blocks = [b for text in texts for b in _BLOCK.split(text) if b and _BLOCK.match(b)]
    tried = [(b, k, k + 1) for b in blocks for k in range(len(b))]  # the fragment b[k:end]
    while tried:
        freq.read_all(b[k:end] for b, k, end in tried)
        tried = [(b, k, end + 1) for b, k, end in tried if end < len(b) and b[k:end] in freq]


def _cut_block(sentence: str, freq: Frequencies) -> Iterator[str]:
    """jieba's `__cut_DAG_NO_HMM`: every dictionary word starting at each position, then the
    route of highest summed log frequency, computed from the end as jieba does (same floats)."""
    n = len(sentence)
    dag: dict[int, list[int]] = {}
    for k in range(n):
        ends, i, frag = [], k, sentence[k]
        while i < n and frag in freq:
            if freq[frag]:
                ends.append(i)
            i += 1
            frag = sentence[k : i + 1]
        dag[k] = ends or [k]
    route: dict[int, tuple[float, int]] = {n: (0, 0)}
    logtotal = log(freq.total)
    for idx in range(n - 1, -1, -1):
        route[idx] = max((log(freq.get(sentence[idx : x + 1]) or 1) - logtotal + route[x + 1][0], x) for x in dag[idx])
    x, buf = 0, ""
    while x < n:
        y = route[x][1] + 1
        word = sentence[x:y]
        if _LATIN.match(word) and len(word) == 1:
            buf += word
        else:
            if buf:
                yield buf
                buf = ""
            yield word
        x = y
    if buf:
        yield buf


@lru_cache(maxsize=1)
def frequencies() -> Frequencies:
    """jieba's FREQ for its default dictionary, read as it is needed."""
    path = _cache_path("freq", "sqlite")
    try:
        return Frequencies(path)
    except sqlite3.Error:  # not made yet (or left unreadable): made once, as jieba makes its cache
        _write(path, _build_frequencies)
        return Frequencies(path)


class Frequencies:
    """jieba's FREQ (word or word prefix -> count, 0 for a bare prefix) as a mapping that reads the
    indexed copy word by word, and remembers each answer, found or not."""

    def __init__(self, path: Path) -> None:
        self._path, self._lock = path, threading.Lock()
        self._known: dict[str, int | None] = {}
        self._pid, self._db = os.getpid(), self._open()
        self.total: int = self._db.execute("SELECT n FROM total").fetchone()[0]

    def get(self, word: str, default: Any = None) -> Any:
        n = self._known.get(word, _UNSEEN)
        if n == _UNSEEN:
            n = self._known[word] = self._read(word)
        return default if n is None else n

    def __contains__(self, word: object) -> bool:
        return self.get(word) is not None

    def __getitem__(self, word: str) -> int:
        n = self.get(word)
        if n is None:
            raise KeyError(word)
        return n

    def read_all(self, words: Iterable[str]) -> None:
        """Remember the answers for every word not known yet, read _BATCH at a time."""
        todo = [w for w in dict.fromkeys(words) if w not in self._known]
        for i in range(0, len(todo), _BATCH):
            batch = todo[i : i + _BATCH]
            marks = ", ".join("?" * len(batch))
            with self._lock:
                found = dict(self._connection().execute(f"SELECT word, n FROM freq WHERE word IN ({marks})", batch))
            self._known.update((w, found.get(w)) for w in batch)

    def _read(self, word: str) -> int | None:
        with self._lock:
            row = self._connection().execute("SELECT n FROM freq WHERE word = ?", (word,)).fetchone()
        return None if row is None else row[0]

    def _connection(self) -> sqlite3.Connection:
        """The open copy (the lock held): a forked child opens its own connection."""
        if self._pid != os.getpid():
            self._pid, self._db = os.getpid(), self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{self._path}?mode=ro", uri=True, check_same_thread=False)


def _build_frequencies(path: Path) -> None:
    """The indexed copy: exactly what jieba builds in memory from the dictionary file."""
    import jieba

    freq, total = jieba.Tokenizer.gen_pfdict(_dictionary_path().open("rb"))
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE freq (word TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID")
        db.execute("CREATE TABLE total (n INTEGER NOT NULL)")
        db.executemany("INSERT INTO freq VALUES (?, ?)", sorted(freq.items()))
        db.execute("INSERT INTO total VALUES (?)", (total,))
    db.close()


def _dictionary_path() -> Path:
    """jieba's default dictionary, found without importing jieba (its import alone took 0.1 s)."""
    spec = importlib.util.find_spec("jieba")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("jieba is not installed")
    return Path(spec.origin).with_name("dict.txt")


def _cache_path(what: str, suffix: str) -> Path:
    stat = _dictionary_path().stat()
    key = hashlib.sha256(f"{_dictionary_path()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"pipeline_kit_zh_{what}_{key}.{suffix}"


def _write(path: Path, make: Any) -> None:
    """Make the file under a temporary name, then move it in: a concurrent reader sees all or nothing."""
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    make(tmp)
    os.replace(tmp, path)
