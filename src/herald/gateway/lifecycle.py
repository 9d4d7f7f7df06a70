"""`herald gateway run|status|stop`: the long-running process and its files.

`run_gateway` runs in the foreground on one asyncio loop: it loads the profiles the
gateway serves, builds the enabled adapters (``herald.gateway.platforms.<name>``,
imported lazily; a module that does not exist yet is skipped with a warning),
connects them, resumes turns a restart interrupted (unless the restart-loop guard
says no), and serves until SIGTERM/SIGINT. Then it drains: new messages are refused
with a clear notice, running turns get `gateway.drain_seconds` to finish and are
interrupted after that (a second signal interrupts at once), state is persisted and
the process exits 0.

Files under ``<home>/gateway/``: ``gateway.pid`` (the running process), ``status.json``
(state, platforms, running turns; rewritten every few seconds) and the guard file.
The log is ``<home>/logs/gateway.log``, redacted.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import logging
import logging.handlers
import os
import signal
import time
from typing import TYPE_CHECKING, Any

from herald.environments.processes import pid_alive
from herald.gateway.restart_guard import RestartGuard, guard_path
from herald.gateway.routing import routed_profiles
from herald.state.run_files import GatewayStatus, RunFiles

if TYPE_CHECKING:
    from herald.config import HeraldHome, Settings
    from herald.gateway.contracts import PlatformAdapter
    from herald.gateway.runner import GatewayRunner
    from herald.gateway.watchdog import Watchdog
    from herald.state.gateway_tables import InflightTurn

log = logging.getLogger(__name__)

STATUS_EVERY = 5.0
SWEEP_EVERY = 60.0
LEDGER_DAYS = 7
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


# ---- files in the home -------------------------------------------------------------------


def gateway_status(home: HeraldHome) -> GatewayStatus:
    return RunFiles(home).read_status()


def stop_gateway(home: HeraldHome, *, timeout: float = 60.0) -> tuple[bool, str]:
    """SIGTERM the running gateway and wait up to `timeout` s for it to exit."""
    files = RunFiles(home)
    pid = files.running_pid()
    if pid is None:
        return False, "the gateway is not running"
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True, f"the gateway (pid {pid}) stopped"
        time.sleep(0.1)
    return False, f"the gateway (pid {pid}) is still draining after {timeout:.0f} s"


# ---- logging -----------------------------------------------------------------------------


class _RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        from herald.safety import redact

        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


def redacting_filter() -> logging.Filter:
    return _RedactingFilter()


def setup_gateway_logging(settings: Settings) -> logging.Handler | None:
    """Everything the process logs also goes to ``logs/gateway.log``, redacted."""
    from herald.safety import register_secret_values

    register_secret_values(settings.secrets.secret_values())
    try:
        settings.home.logs_dir.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            settings.home.logs_dir / "gateway.log",
            maxBytes=10_000_000,
            backupCount=3,
            encoding="utf-8",
        )
    except OSError as exc:
        log.warning("cannot write the gateway log: %s", exc)
        return None
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(_RedactingFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    return handler


# ---- profiles and adapters ---------------------------------------------------------------


def served_settings(settings: Settings) -> dict[str, Settings]:
    """The gateway's own profile plus `gateway.serve_profiles` (default: the profiles
    `profile_routes` name). A profile that does not exist or does not load is left out
    (and logged); routes to it then answer with `UnservedProfileError`."""
    from herald.config import ConfigError, ProfileNameError, Secrets, load_config, resolve_home
    from herald.config import Settings as SettingsType

    gateway = settings.config.gateway
    served = {settings.home.profile_label: settings}
    for name in gateway.serve_profiles or routed_profiles(gateway.profile_routes):
        if name in served:
            continue
        try:
            home = resolve_home(name, create=False)
            if not home.root.is_dir():
                log.error("profile %r is routed to but does not exist (%s)", name, home.root)
                continue
            served[name] = SettingsType(
                home=home, config=load_config(home.config_path), secrets=Secrets(home.env_path)
            )
        except (ProfileNameError, ConfigError, OSError) as exc:
            log.error("not serving profile %r: %s", name, exc)
    return served


def load_adapters(
    settings: Settings, extras: dict[str, Any] | None = None
) -> tuple[list[PlatformAdapter], list[str]]:
    """An adapter for every enabled platform, built by its module's `create_adapter`,
    and what went wrong with the platforms that could not be built."""
    platforms = settings.config.gateway.platforms
    adapters: list[PlatformAdapter] = []
    problems: list[str] = []
    for name in type(platforms).model_fields:
        section = getattr(platforms, name)
        if not getattr(section, "enabled", False):
            continue
        module_name = f"herald.gateway.platforms.{name}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            log.warning(
                "platform %s is enabled but %s does not exist yet; skipping it", name, module_name
            )
            problems.append(f"{name}: no adapter module {module_name}")
            continue
        factory = module.create_adapter
        offered = {"settings": settings, "home": settings.home, **(extras or {})}
        accepted = _accepted_kwargs(factory, offered)
        try:
            adapters.append(factory(section, settings.secrets, **accepted))
        except Exception as exc:  # a bad token, a missing secret: say which platform
            log.error("platform %s cannot start: %s", name, exc)
            problems.append(f"{name}: {exc}")
    _plugin_adapters(settings, extras, adapters, problems)
    return adapters, problems


def _plugin_adapters(
    settings: Settings,
    extras: dict[str, Any] | None,
    adapters: list[PlatformAdapter],
    problems: list[str],
) -> None:
    """The platforms enabled plugins register; each gets its plugins.config section."""
    from herald.plugins import plugins_for

    plugins = plugins_for(
        settings.config,
        settings.home,
        settings.secrets,
        cwd=settings.config.gateway.cwd or os.getcwd(),
    )
    for name, registered in plugins.platforms.items():
        if any(a.name == name for a in adapters):
            problems.append(
                f"{name}: plugin {registered.plugin!r} clashes with a built-in platform"
            )
            continue
        offered = {
            "settings": settings,
            "home": settings.home,
            "config": settings.config.plugins.config.get(registered.plugin, {}),
            **(extras or {}),
        }
        try:
            adapters.append(registered.factory(**_accepted_kwargs(registered.factory, offered)))
        except Exception as exc:  # a plugin's bug: that platform only
            log.error("platform %s (plugin %s) cannot start: %s", name, registered.plugin, exc)
            problems.append(f"{name} (plugin {registered.plugin}): {exc}")


def _accepted_kwargs(fn: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    params = inspect.signature(fn).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in params}


# ---- serving -----------------------------------------------------------------------------


async def serve(
    runner: GatewayRunner,
    adapters: list[PlatformAdapter],
    *,
    home: HeraldHome,
    stop: asyncio.Event,
    force: asyncio.Event | None = None,
) -> int:
    """Connect, resume, serve until `stop`, drain, disconnect. The exit code. A stop
    that comes while platforms still connect ends those connects and drains the turns
    the others began meanwhile."""
    config = runner.config
    files = RunFiles(home)
    status = GatewayStatus(running=True, pid=os.getpid(), state="starting", started_at=time.time())
    files.write_status(status)
    for adapter in adapters:
        runner.adapters[adapter.name] = adapter
        adapter.health.down_after_errors = config.watchdog.down_after_errors
    interrupted = runner.inflight()  # read before a platform can begin a new turn
    connected = await _connect_all(runner, adapters, stop)
    if connected is not None and adapters and not connected:
        status.state, status.running, status.detail = "stopped", False, "no platform could start"
        files.write_status(status)
        runner.close()
        return 1
    if connected is None:
        log.info("stopped while platforms were still connecting")
    else:
        status.state, status.platforms = "running", [a.name for a in connected]
        files.write_status(status)
        await _serve_until_stopped(runner, home, files, status, stop, interrupted)
    log.info("stopping: draining running turns (up to %.0f s)", config.drain_seconds)
    status.state = "draining"
    files.write_status(status)
    await runner.drain(config.drain_seconds, force=force)
    for adapter in runner.adapters.values():
        try:
            await adapter.disconnect()
        except Exception as exc:
            log.warning("platform %s did not disconnect cleanly: %s", adapter.name, exc)
    runner.close()
    status.state, status.running, status.running_turns = "stopped", False, 0
    files.write_status(status)
    log.info("gateway stopped")
    return 0


async def _serve_until_stopped(
    runner: GatewayRunner,
    home: HeraldHome,
    files: RunFiles,
    status: GatewayStatus,
    stop: asyncio.Event,
    interrupted: list[InflightTurn],
) -> None:
    """Resume the `interrupted` turns, then run the watchdog, the chores and the
    profiles' cron schedulers until `stop`; they are stopped before the drain."""
    from herald.gateway.resume import resume_turns
    from herald.gateway.watchdog import Watchdog

    config = runner.config
    if interrupted:
        guard = RestartGuard(
            guard_path(home.root),
            window=config.restart_window_seconds,
            max_boots=config.restart_max_boots,
        )
        allowed = config.auto_resume and guard.check_and_record()
        await resume_turns(runner, interrupted, allowed=allowed, looped=config.auto_resume)
    watchdog = Watchdog(runner, config)
    runner.health_report = watchdog.report
    chores = asyncio.ensure_future(_chores(runner, watchdog, files, status))
    crons = _start_crons(runner)
    await stop.wait()
    for cron in crons:
        await cron.stop()
    chores.cancel()
    await watchdog.stop()


async def _connect_all(
    runner: GatewayRunner, adapters: list[PlatformAdapter], stop: asyncio.Event
) -> list[PlatformAdapter] | None:
    """Connect every platform side by side (a slow handshake holds no other back); the
    ones that connected, in their configured order. A platform that fails is logged and
    marked on its health. None when `stop` came first: the connects still running are
    cancelled (`end_task`), so a stop during start-up is not kept waiting for them."""
    from herald.gateway.aio import end_task

    async def connect(adapter: PlatformAdapter) -> bool:
        try:
            await adapter.connect(runner)
        except Exception as exc:
            log.error("platform %s could not connect: %s", adapter.name, exc)
            adapter.health.error(f"could not connect: {exc}")
            return False
        log.info("platform %s connected", adapter.name)
        return True

    connects = [asyncio.ensure_future(connect(adapter)) for adapter in adapters]
    stopping = asyncio.ensure_future(stop.wait())
    try:
        pending: set[asyncio.Future[Any]] = {*connects, stopping}
        while not stopping.done() and not all(c.done() for c in connects):
            _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (*connects, stopping):
            await end_task(task)  # a connect still running: stopped (or we were cancelled)
    if not all(c.done() and not c.cancelled() for c in connects):
        return None
    return [adapter for adapter, ok in zip(adapters, connects, strict=True) if ok.result()]


def _start_crons(runner: GatewayRunner) -> list[Any]:
    """A scheduler for every served profile with `cron.enabled`, each ticking its own
    profile's jobs (the cron store claims each occurrence once, so a profile another
    process schedules too never runs a job twice), delivering through the runner's ledger.
    A profile whose scheduler cannot start is logged; the others and the chats go on."""
    from herald.cron.daemon import GatewayCron
    from herald.cron.targets import SendOutcome

    async def send(platform: str, chat: str, thread: str | None, text: str, key: str) -> Any:
        from herald.gateway.delivery import Target

        adapter = runner.adapters.get(platform)
        if adapter is None or not adapter.push_replies:
            return SendOutcome(ok=False, error=f"platform {platform} is not connected")
        report = await runner.deliverer.deliver(
            adapter, Target(platform, chat, thread), text, key=key
        )
        return SendOutcome(ok=report.ok, dead=report.dead, error=report.error)

    started: list[Any] = []
    for profile in sorted(runner.served):
        try:
            settings = runner.settings_for(profile)
        except Exception as exc:  # a profile that no longer loads
            log.error("no cron scheduler for profile %s: %s", profile, exc)
            continue
        if not settings.config.cron.enabled:
            continue
        try:
            cron = GatewayCron(settings, send, tools=runner.tools)
            cron.start()
        except Exception as exc:  # the chats keep working without the scheduler
            log.error("the cron scheduler of profile %s could not start: %s", profile, exc)
            continue
        log.info("cron scheduler started for profile %s", profile)
        started.append(cron)
    return started


async def _chores(
    runner: GatewayRunner, watchdog: Watchdog, files: RunFiles, status: GatewayStatus
) -> None:
    """The watchdog's pass, the status file and the release of idle agents, every
    `watchdog.check_every` seconds (at most STATUS_EVERY), so an agent idle for
    `gateway.agent_idle_seconds` is closed within one pass even when nothing arrives;
    the ledgers are pruned every SWEEP_EVERY."""
    last_sweep = time.monotonic()
    every = min(STATUS_EVERY, runner.config.watchdog.check_every)
    while True:
        await asyncio.sleep(every)
        try:
            watchdog.check()
            report = watchdog.report()
            status.health, status.transitions = report["platforms"], report["transitions"]
            status.undelivered = report["undelivered"]
        except Exception:  # the watchdog must outlive whatever it watches
            log.exception("the gateway watchdog's check failed")
        runner.cache.evict()
        status.running_turns = runner.running_turns
        status.live_agents = len(runner.cache)
        files.write_status(status)
        if time.monotonic() - last_sweep >= SWEEP_EVERY:
            try:  # answered events and settled replies are kept a week, then forgotten
                runner.inbound.prune(time.time() - LEDGER_DAYS * 86400)
                runner.outbox.prune(time.time() - LEDGER_DAYS * 86400)
            except Exception as exc:
                log.warning("pruning the inbound ledger and the outbox failed: %s", exc)
            last_sweep = time.monotonic()


def run_gateway(settings: Settings, *, adapters: list[PlatformAdapter] | None = None) -> int:
    """`herald gateway run`: serve in the foreground until SIGTERM/SIGINT; the exit code."""
    files = RunFiles(settings.home)
    other = files.running_pid()
    if other is not None:
        log.error("a gateway is already running for %s (pid %d)", settings.home.root, other)
        return 1
    handler = setup_gateway_logging(settings)
    files.write_pid()
    from herald.gateway.arenas import limit_malloc_arenas
    from herald.kanban.dispatch import gateway_dispatcher

    limit_malloc_arenas()  # a process that lives for weeks: keep its heap compact

    try:
        with gateway_dispatcher(settings):  # the task board's dispatcher (kanban.in_gateway)
            return asyncio.run(_main(settings, adapters))
    finally:
        files.remove_pid()
        if handler is not None:
            logging.getLogger().removeHandler(handler)
            handler.close()


async def _main(settings: Settings, adapters: list[PlatformAdapter] | None) -> int:
    from herald.gateway.runner import GatewayRunner

    stop, force = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        if stop.is_set():
            log.warning("second stop signal: interrupting running turns now")
            force.set()
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal)
    own = settings.home.profile_label
    runner = GatewayRunner(served_settings(settings), default_profile=own)
    problems: list[str] = []
    chosen = adapters
    if chosen is None:
        chosen, problems = load_adapters(settings, {"store": runner.store_for(own)})
    if problems and not chosen:
        log.error("no enabled platform could start: %s", "; ".join(problems))
        runner.close()
        return 1
    if not chosen:
        log.warning(
            "no gateway platform is enabled (gateway.platforms.*.enabled); idle until stopped"
        )
    log.info("gateway starting (pid %d, home %s)", os.getpid(), settings.home.root)
    return await serve(runner, chosen, home=settings.home, stop=stop, force=force)


__all__ = [
    "GatewayStatus",
    "RunFiles",
    "gateway_status",
    "load_adapters",
    "redacting_filter",
    "run_gateway",
    "serve",
    "served_settings",
    "setup_gateway_logging",
    "stop_gateway",
]
