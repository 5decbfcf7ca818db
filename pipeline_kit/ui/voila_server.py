"""Voilà as a creator's server: a cap on kernels, and their list readable at GET /api/kernels.

Voilà starts one kernel per page load and frees it only when the browser says goodbye (a beacon
on `beforeunload`); a tab that is killed, a reload that races, a page fetched without a browser
leave the kernel running. jupyter_server's own culler (`MappingKernelManager.cull_idle_timeout`,
`cull_interval`, set by `serve.py`) ends kernels idle and without a connection after a few
minutes; it has no cap, so this kernel manager adds one, through Voilà's documented setting for
it (`VoilaConfiguration.multi_kernel_manager_class`): a page load beyond `max_kernels` first
shuts down a kernel no page is connected to (a page that was closed, or one idle for
`orphan_after` seconds that never connected) and is refused with 503 when every kernel serves
an open page. The app adds jupyter_server's kernel list, read-only, so the count can be watched.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.services.kernels.handlers import MainKernelHandler
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from jupyter_server.utils import url_path_join
from tornado import web
from traitlets import Integer
from voila.app import Voila


class CappedKernelManager(AsyncMappingKernelManager):
    """jupyter_server's kernel manager with a cap on the kernels running at once."""

    max_kernels = Integer(8, config=True, help="Kernels running at once, at most (one per open page).")
    orphan_after = Integer(
        60,
        config=True,
        help="Seconds after which an idle kernel that no page ever connected to may be shut down for a new page.",
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._seen: set[str] = set()  # kernels a page has connected to at least once

    def notify_connect(self, kernel_id: str) -> None:
        super().notify_connect(kernel_id)
        self._seen.add(kernel_id)

    async def start_kernel(self, *, kernel_id: str | None = None, path: Any = None, **kwargs: Any) -> str:
        if kernel_id is None or kernel_id not in self:
            while len(self._kernels) >= self.max_kernels:
                spare = self._spare()
                if spare is None:
                    raise web.HTTPError(
                        503,
                        reason=f"{self.max_kernels} pages are open on this server, the most it keeps: close one",
                    )
                self.log.warning("Shutting down kernel %s (no page uses it) to serve a new page", spare)
                await ensure_async(self.shutdown_kernel(spare))
        return await super().start_kernel(kernel_id=kernel_id, path=path, **kwargs)

    async def shutdown_kernel(self, kernel_id: str, now: bool = False, restart: bool = False) -> None:
        self._seen.discard(kernel_id)
        await super().shutdown_kernel(kernel_id, now=now, restart=restart)

    def _spare(self) -> str | None:
        """The kernel to give up for a new page: idle, no page connected, and either its page
        was closed or it has waited `orphan_after` seconds for one; the least recently active."""
        now = datetime.now(timezone.utc)  # kernels' last_activity is aware UTC
        spare = [
            (kernel.last_activity, kernel_id)
            for kernel_id, kernel in list(self._kernels.items())
            if not self._kernel_connections.get(kernel_id, 0)
            and getattr(kernel, "execution_state", None) != "busy"
            and (
                kernel_id in self._seen
                or now - getattr(kernel, "last_activity", now) > timedelta(seconds=self.orphan_after)
            )
        ]
        return min(spare)[1] if spare else None


class KernelList(MainKernelHandler):
    """GET /api/kernels: jupyter_server's list of running kernels (starting one here is refused)."""

    SUPPORTED_METHODS = ("GET",)  # type: ignore[assignment]


class CreatorVoila(Voila):
    """Voilà with the kernel list at GET /api/kernels (standalone Voilà serves single kernels only)."""

    def init_handlers(self) -> list[Any]:
        return [(url_path_join(self.server_url, r"/api/kernels"), KernelList), *super().init_handlers()]


main = CreatorVoila.launch_instance

if __name__ == "__main__":
    main()
