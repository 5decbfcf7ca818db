"""Drive a chaos run: set up the tasks, start the fleet, inject faults by progress, then check.

Faults are planned up front (seeded): each fires when a random share of the tasks (2-90 %) is
finished, so a run of any size gets all of its faults. The runner watches the database directly;
workers reach a server database through the `Proxy`, which is what `cut` and `freeze` act on.
"""

from __future__ import annotations

import random
import secrets
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from pipeline_kit import engine, security
from pipeline_kit.chaos import server
from pipeline_kit.chaos.disk import SmallDisk
from pipeline_kit.chaos.fleet import Fleet, Slot
from pipeline_kit.chaos.invariants import Violation, check_all
from pipeline_kit.chaos.profiles import Profile
from pipeline_kit.chaos.proxy import Proxy
from pipeline_kit.chaos.report import Report
from pipeline_kit.chaos.worker import WATCHDOG_EVERY_S
from pipeline_kit.db.connect import Database, connect, normalise_url
from pipeline_kit.db.migrate import init
from pipeline_kit.db.schema import attempts, events, tasks
from pipeline_kit.errors import BadInput
from pipeline_kit.store import open_store

LANE = "chaos"
TICK_S = 0.1
WARM_S = 1.5  # a worker younger than this is still importing: killing it tests nothing


@dataclass(frozen=True, kw_only=True)
class Settings:
    profile: Profile
    database: str | None = None  # None: a fresh SQLite file in the work folder
    seed: int = 0
    workdir: Path | None = None
    worker_account: bool = False  # workers log in as a worker account (grant-worker), not as the owner


@dataclass
class _Watch:
    """Leases a faulted worker held, until the watchdog hands them back."""

    pending: list[tuple[str, str, float]] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def add(self, db: Database, worker_id: str) -> None:
        with db.engine.connect() as conn:
            held = conn.execute(
                sa.select(tasks.c.task_id, tasks.c.lease_token).where(
                    tasks.c.worker_id == worker_id, tasks.c.status == "processing"
                )
            ).all()
        self.pending += [(r.task_id, r.lease_token, time.monotonic()) for r in held]

    def poll(self, db: Database) -> None:
        if not self.pending:
            return
        with db.engine.connect() as conn:
            outcomes = {
                (r.task_id, r.lease_token): r.outcome
                for r in conn.execute(
                    sa.select(attempts.c.task_id, attempts.c.lease_token, attempts.c.outcome).where(
                        attempts.c.task_id.in_([t for t, _, _ in self.pending])
                    )
                )
            }
        still: list[tuple[str, str, float]] = []
        for task_id, token, since in self.pending:
            outcome = outcomes.get((task_id, token))
            if outcome is None:
                still.append((task_id, token, since))
            elif outcome == "lost":  # (a task finished before the signal landed is no recovery)
                self.seconds.append(time.monotonic() - since)
        self.pending = still


@dataclass
class _Run:
    """One run's moving parts and what happened to them."""

    db: Database
    url: str  # direct, for the runner and server restarts
    profile: Profile
    fleet: Fleet
    proxy: Proxy | None
    disk: SmallDisk | None
    rng: random.Random
    injected: Counter[str] = field(default_factory=Counter)
    watch: _Watch = field(default_factory=_Watch)
    restarts_s: list[float] = field(default_factory=list)
    restarting: list[threading.Thread] = field(default_factory=list)
    late: list[Violation] = field(default_factory=list)

    def plan(self) -> list[tuple[float, str]]:
        p = self.profile
        kinds = ["kill"] * p.kills + ["stop"] * p.stops
        if self.proxy:
            kinds += ["cut"] * p.cuts + ["freeze"] * p.freezes
        if self.proxy and server.can_restart(self.url):
            kinds += ["restart"] * p.restarts
        if self.disk:
            kinds += ["disk_full"] * p.disk_full
        return sorted((self.rng.uniform(0.02, 0.9), kind) for kind in kinds)

    def drive(self) -> None:
        """Keep the fleet up, fire due faults, watch recoveries, until every task is finished."""
        plan = self.plan()
        deadline = time.monotonic() + self.profile.deadline_s
        self.fleet.start_missing()
        try:
            while True:
                try:
                    finished = _finished(self.db)
                    self.watch.poll(self.db)
                except sa.exc.DBAPIError:  # the server is restarting: the fleet rides it out alone
                    finished = -1
                if finished >= self.profile.tasks:
                    break
                if time.monotonic() > deadline:
                    self.late.append(
                        Violation(
                            "deadline",
                            None,
                            f"{finished} of {self.profile.tasks} tasks finished after {self.profile.deadline_s:.0f} s",
                        )
                    )
                    break
                self.fleet.wake_due()
                self.restarting = [t for t in self.restarting if t.is_alive()]
                while plan and finished >= 0 and plan[0][0] * self.profile.tasks <= finished:
                    if not self.fire(plan[0][1]):
                        break
                    self.injected[plan.pop(0)[1]] += 1
                self.fleet.start_missing()
                time.sleep(TICK_S)
            self.fleet.wake_all()  # a worker still stopped must see there is no work left, and exit
            quit_by = time.monotonic() + 30
            while self.fleet.any_alive() and time.monotonic() < quit_by:
                time.sleep(TICK_S)
            for thread in self.restarting:
                thread.join()
        finally:
            self.fleet.shutdown()
        _answered(lambda: self.watch.poll(self.db))  # the last restart was waited for: the server answers

    def fire(self, kind: str) -> bool:
        """Inject one fault; False when it cannot fire yet (no warm worker, a restart in progress)."""
        lease_s = self.profile.lease_s
        if kind in ("kill", "stop"):
            warm = [s for s in self.fleet.running() if _age(s) >= WARM_S]
            if not warm:
                return False
            slot = self.rng.choice(warm)
            try:
                self.watch.add(self.db, slot.worker_id)
            except sa.exc.DBAPIError:  # the server is restarting: fire once it answers again
                return False
            if kind == "kill":
                self.fleet.kill(slot)
            else:
                self.fleet.stop(slot, lease_s + 1.5)
        elif kind == "restart":
            if self.restarting:
                return False
            thread = threading.Thread(target=lambda: self.restarts_s.append(server.restart(self.url)), daemon=True)
            thread.start()
            self.restarting.append(thread)
        elif kind == "disk_full" and self.disk:
            self.disk.fill(lease_s)
        elif kind == "cut" and self.proxy:
            self.proxy.cut()
        elif kind == "freeze" and self.proxy:
            self.proxy.freeze(lease_s * 0.75)
        return True


def run_chaos(settings: Settings) -> Report:
    """Run the profile against the database; never raises for a broken invariant (see Report.ok)."""
    profile = settings.profile
    workdir = settings.workdir or Path(tempfile.mkdtemp(prefix="pk-chaos-"))
    workdir.mkdir(parents=True, exist_ok=True)
    url = _absolute(settings.database or f"sqlite:///{workdir / 'chaos.db'}")
    db = connect(url)
    proxy = Proxy(_host_port(url)).start() if db.dialect != "sqlite" else None
    disk: SmallDisk | None = None
    try:
        _prepare(db, profile)
        account = _worker_account(db, settings.seed) if settings.worker_account else None
        workers_url = account.url if account else url
        if profile.disk_full:
            made_in = (open_store(db).root or workdir / "data") / "outputs"  # where the workers make files
            disk = SmallDisk.mount(made_in, size_mb=max(16, profile.tasks // 100))
        fleet = Fleet(
            url=_via(workers_url, proxy.port) if proxy else workers_url,
            backend=profile.backend,
            lease_s=profile.lease_s,
            heartbeat_s=profile.heartbeat_s,
            lane=LANE,
            cwd=workdir,
            size=profile.workers,
            skew_s=profile.skew_s,
        )
        run = _Run(
            db=db, url=url, profile=profile, fleet=fleet, proxy=proxy, disk=disk, rng=random.Random(settings.seed)
        )
        started = time.monotonic()
        if profile.skew_s:
            run.injected["clock_skew"] += 1
        run.drive()
        seconds = time.monotonic() - started
        violations = run.late + check_all(db, root=workdir)
        with db.engine.connect() as conn:
            counts = dict(conn.execute(sa.select(tasks.c.status, sa.func.count()).group_by(tasks.c.status)).all())
            fenced = conn.execute(
                sa.select(sa.func.count()).select_from(events).where(events.c.kind == "stale")
            ).scalar_one()
        return Report(
            profile=profile.name,
            database=db.url,
            account=account.role if account else None,
            workdir=str(workdir),
            tasks=profile.tasks,
            completed=counts.get("completed", 0),
            failed=counts.get("failed", 0),
            seconds=seconds,
            faults=dict(run.injected),
            worker_restarts=fleet.restarted,
            fenced_writes=fenced,
            recoveries_s=tuple(run.watch.seconds),
            recovery_bound_s=profile.lease_s + WATCHDOG_EVERY_S + 1.0,
            server_restarts_s=tuple(run.restarts_s),
            violations=tuple(violations),
        )
    finally:
        if disk:
            disk.unmount()
        if proxy:
            proxy.close()
        db.dispose()


def _prepare(db: Database, profile: Profile) -> None:
    """Schema, the chaos lane and N tasks; refuses a database that already holds tasks."""
    init(db)
    engine.seed_default_lanes(db)
    with db.engine.connect() as conn:
        if conn.execute(sa.select(sa.func.count()).select_from(tasks)).scalar_one():
            raise BadInput(f"chaos needs a database without tasks (it checks every task at the end): {db.url}")
    if LANE not in {lane.lane for lane in engine.list_lanes(db)}:
        engine.add_lane(db, LANE)
    specs = [
        engine.TaskSpec(
            task_id=f"chaos/{n:06d}",
            kind="noop",
            lane=LANE,
            max_attempts=50,
            bookcode="chaos",
            shot_id=f"chaos-{n:06d}",
            params={"seed": n},
        )
        for n in range(1, profile.tasks + 1)
    ]
    for start in range(0, len(specs), 1000):
        with db.engine.begin() as conn:
            engine.enqueue(conn, specs[start : start + 1000])


@dataclass(frozen=True)
class _Account:
    role: str
    url: str  # the run's database, logged in as the role


def _worker_account(db: Database, seed: int) -> _Account:
    """A worker account for the fleet, made with grant-worker's own statements."""
    if db.dialect == "sqlite":
        raise BadInput("--worker-account needs PostgreSQL or MariaDB: SQLite has no accounts")
    role, password = f"pk_chaos_{seed % 1_000_000}", secrets.token_urlsafe(16)
    security.apply(db, security.grant_statements(db.dialect, role, password, database=db.engine.url.database))
    return _Account(role, db.engine.url.set(username=role, password=password).render_as_string(hide_password=False))


def _answered(call: Callable[[], None], tries: int = 60) -> None:
    """Run `call` once the server answers (it may still be coming back from a restart)."""
    for _ in range(tries - 1):
        try:
            return call()
        except sa.exc.DBAPIError:
            time.sleep(1.0)
    call()


def _finished(db: Database) -> int:
    with db.engine.connect() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.count()).select_from(tasks).where(tasks.c.status.in_(("completed", "failed")))
            ).scalar_one()
        )


def _age(slot: Slot) -> float:
    return time.monotonic() - slot.started_at


def _absolute(url: str) -> str:
    """A relative SQLite path made absolute: the workers run in the work folder."""
    parsed = normalise_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
        return f"sqlite:///{Path(parsed.database).resolve()}"
    return url


def _host_port(url: str) -> tuple[str, int]:
    parsed = make_url(url)
    default = 5432 if parsed.get_backend_name() == "postgresql" else 3306
    return parsed.host or "127.0.0.1", parsed.port or default


def _via(url: str, port: int) -> str:
    return make_url(url).set(host="127.0.0.1", port=port).render_as_string(hide_password=False)
