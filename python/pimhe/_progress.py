"""A tqdm-style progress bar for the library's long runs (the Rust ``Progress`` hook calls
``start``, ``advance`` and ``finish``). tqdm draws it when installed; otherwise one line on
stderr is rewritten in place. Quiet unless stderr is a terminal, as the CLI's bars are."""

from __future__ import annotations

import sys
import time
from typing import Optional


def wanted(progress: Optional[bool]) -> bool:
    """``progress=None`` means: when stderr is a terminal."""
    return sys.stderr.isatty() if progress is None else bool(progress)


class Bar:
    def __init__(self) -> None:
        self._tqdm = None
        self._total = 0
        self._done = 0
        self._label = ""
        self._start = 0.0

    def start(self, total: int, label: str) -> None:
        self.finish()
        self._total, self._done, self._label, self._start = total, 0, label, time.monotonic()
        try:
            from tqdm import tqdm

            self._tqdm = tqdm(total=total or None, desc=label, file=sys.stderr, leave=False)
        except ImportError:
            self._draw()

    def advance(self, n: int) -> None:
        self._done += n
        if self._tqdm is not None:
            self._tqdm.update(n)
        else:
            self._draw()

    def finish(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()
            self._tqdm = None
        elif self._label:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
        self._label = ""

    def _draw(self) -> None:
        width = 30
        filled = width * self._done // self._total if self._total else 0
        elapsed = time.monotonic() - self._start
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self._done}/{self._total} {self._label} {elapsed:.1f}s")
        sys.stderr.flush()
