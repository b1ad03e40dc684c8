"""The cloud routes a Docent keeps open: opened when a front end asks for them, reopened when
their settings or keys change, closed at the end. Whether they are wanted is state of its own:
a front end that never asked (a CLI command without a question) never opens a session."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from app.cloud.health import HealthListener
from app.routing import CloudModel
from app.settings import CloudSettings

if TYPE_CHECKING:
    from app.cloud.routes import CloudRoutes

RoutesOpener = Callable[[CloudSettings, HealthListener | None], Awaitable["CloudRoutes"]]


class CloudSession:
    def __init__(self, settings: CloudSettings, open_routes: RoutesOpener) -> None:
        self.settings = settings
        self.routes: CloudRoutes | None = None
        self.wanted = False
        self._open_routes = open_routes
        self._listener: HealthListener | None = None
        self._changing = asyncio.Lock()  # a start and a reconnect at once must not open twice

    async def start(self, listener: HealthListener | None = None) -> None:
        """Open a session to every configured route (seconds for a stdio server: at start-up,
        not per question). `listener` hears every health change."""
        self._listener = listener or self._listener
        self.wanted = True
        async with self._changing:
            await self._open()

    async def ready(self) -> CloudRoutes | None:
        """Start, and wait until every route has connected or failed: a one-off command (the
        CLI, a bench) routes with all it will have, not around a route still connecting."""
        await self.start()
        if self.routes is not None:
            await self.routes.settled()
        return self.routes

    async def apply(self, settings: CloudSettings) -> None:
        """Use `settings` from now on (reconnecting if the routes were wanted)."""
        self.settings = settings
        await self.reconnect()

    async def reconnect(self) -> None:
        """Close the sessions and, if they are wanted, open them again with the current
        settings and keys (after a key was stored, too)."""
        async with self._changing:
            await self._close()
            if self.wanted:
                await self._open()

    def models(self) -> list[CloudModel]:
        return self.routes.models() if self.routes else []

    async def close(self) -> None:
        self.wanted = False
        async with self._changing:
            await self._close()

    async def _open(self) -> None:
        if self.routes is None and self.settings.configured:
            self.routes = await self._open_routes(self.settings, self._listener)

    async def _close(self) -> None:
        if self.routes is not None:
            routes, self.routes = self.routes, None
            await routes.close()
