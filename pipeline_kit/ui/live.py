"""Keep a screen current without blocking the kernel: an asyncio task that reads off the loop.

Each round runs `fetch` in a worker thread (`asyncio.to_thread`), then hands the result to
`render` on the event loop, so button clicks and other cells stay responsive while the database
answers. `stop()` ends the loop; outside a running loop (plain Python, a test) the same object
refreshes synchronously instead. Actions go through the page (`page.Page.act`), whose redraw of
the monitor is one `refresh` here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Refresher(Generic[T]):
    """Fetch-then-render every `every_s` seconds until stopped; errors are reported, not raised."""

    def __init__(
        self, fetch: Callable[[], T], render: Callable[[T], None], *, every_s: float, on_error: Callable[[str], None]
    ) -> None:
        if every_s <= 0:
            raise ValueError(f"every_s must be above 0, got {every_s}")
        self.fetch, self.render, self.every_s, self.on_error = fetch, render, every_s, on_error
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> bool:
        """Begin refreshing on the running event loop; False when there is none (nothing started)."""
        if self.running:
            return True
        loop = _running_loop()
        if loop is None:
            return False
        self._task = loop.create_task(self._loop())
        return True

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def refresh(self) -> None:
        """One round now: off the loop when there is one, else right here."""
        loop = _running_loop()
        if loop is None:
            self._show(self._read())
        else:
            loop.create_task(self._once())

    async def _loop(self) -> None:
        while True:
            await self._once()
            await asyncio.sleep(self.every_s)

    async def _once(self) -> None:
        self._show(await asyncio.to_thread(self._read))

    def _read(self) -> T | Exception:
        try:
            return self.fetch()
        except Exception as exc:  # a database away for a moment must not end the screen
            return exc

    def _show(self, value: T | Exception) -> None:
        if isinstance(value, Exception):
            self.on_error(f"refresh failed: {type(value).__name__}: {str(value).splitlines()[0] if str(value) else ''}")
        else:
            self.render(value)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
