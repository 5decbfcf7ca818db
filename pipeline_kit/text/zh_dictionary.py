"""jieba's dictionary as the Chinese name finder reads it, each part cached beside jieba's own
cache (the temp directory, keyed by the dictionary's path, size and mtime).

`lexicon`: its words tagged as people or places, all in memory (the scan looks up every position
of a text). `tokenizer`: jieba's tokenizer reading word frequencies one at a time from an indexed
copy of the dictionary: the names of a whole book are confirmed with about 17,000 of its 498,000
entries, where loading them all took 0.45 s and 60 MB. Its cuts are jieba's own, word for word.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import sqlite3
import tempfile
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

_UNSEEN = -1  # no word has this frequency


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


@lru_cache(maxsize=1)
def tokenizer() -> Any:
    """A jieba tokenizer over the default dictionary whose frequencies are read as it needs them."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    path = _cache_path("freq", "sqlite")
    try:
        words = Frequencies(path)
    except sqlite3.Error:  # not made yet (or left unreadable): made once, as jieba makes its cache
        _write(path, _build_frequencies)
        words = Frequencies(path)
    cut = jieba.Tokenizer()
    cut.FREQ, cut.total, cut.initialized = words, words.total, True
    return cut


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

    def _read(self, word: str) -> int | None:
        with self._lock:
            if self._pid != os.getpid():  # a forked child opens its own connection
                self._pid, self._db = os.getpid(), self._open()
            row = self._db.execute("SELECT n FROM freq WHERE word = ?", (word,)).fetchone()
        return None if row is None else row[0]

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
    import jieba

    return Path(jieba.dt.dictionary or Path(jieba.__file__).with_name("dict.txt"))


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
