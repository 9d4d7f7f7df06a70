"""`herald mcp list|test|serve` and `herald acp`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from herald.cli.common import err_console, fail, load, write_stdout

if TYPE_CHECKING:
    from herald.config import Settings
    from herald.mcp import McpManager

app = typer.Typer(
    help="MCP tool servers Herald uses (mcp.servers in config.yaml), and Herald as an MCP "
    "server for other clients.",
    no_args_is_help=True,
)


def _manager(settings: Settings, names: list[str] | None = None) -> McpManager:
    from herald.mcp import McpManager

    servers = settings.config.mcp.servers
    if names is not None:
        servers = {n: servers[n] for n in names}
    return McpManager(servers, secrets=settings.secrets, home=settings.home)


@app.command("list")
def list_servers(
    ctx: typer.Context,
    start: Annotated[
        bool, typer.Option("--start", help="start every enabled server to list its live tools")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """The configured servers, their state and tools (without --start, lazy servers show
    the tools they listed last time)."""
    from herald.cli.tables import Column, print_json, print_table

    settings = load(ctx)
    if not settings.config.mcp.servers:
        if as_json:
            print_json([])
            return
        write_stdout(
            "No MCP servers are configured. Add one under mcp.servers in "
            f"{settings.home.config_path} (see the README: Adding an MCP server).\n"
        )
        return
    manager = _manager(settings)
    try:
        statuses = manager.status(start=start)
    finally:
        manager.close()
    if as_json:
        print_json([
            {"name": s.name, "transport": s.transport, "state": s.state, "error": s.error,
             "approve": s.approve, "tools": list(s.tools)}
            for s in statuses
        ])  # fmt: skip
        return
    rows = [
        (s.name, s.transport, s.state + (f": {s.error}" if s.error else ""), s.approve,
         ", ".join(s.tools) if s.tools else "-")
        for s in statuses
    ]  # fmt: skip
    columns = [Column("server"), Column("transport"), Column("state", flex=True, fold=True),
               Column("approve"), Column("tools", flex=True, fold=True)]  # fmt: skip
    print_table(columns, rows)


@app.command("test")
def test_server(
    ctx: typer.Context, name: Annotated[str, typer.Argument(help="server name")]
) -> None:
    """Start one server, list its tools with their Herald names, and stop it."""
    from herald.mcp import tool_name

    settings = load(ctx)
    servers = settings.config.mcp.servers
    if name not in servers:
        known = ", ".join(sorted(servers)) or "none"
        fail(f"no MCP server {name!r} in mcp.servers (configured: {known})")
    if not servers[name].enabled:
        fail(f"MCP server {name!r} is disabled (mcp.servers.{name}.enabled: false)")
    manager = _manager(settings, [name])
    try:
        conn = manager.ensure_started(name)
        if conn.state != "ready":
            fail(f"MCP server {name} did not start: {conn.error or conn.state}", code=1)
        tools = manager.tools(name)
        lines = [
            f"{name}: ready ({conn.server_label or 'unnamed server'}, "
            f"{conn.config.transport}), approve: {manager.policy(name)}",
            f"{len(tools)} tool(s):",
        ]
        for tool in tools:
            marks = "read-only" if tool.read_only else "may write"
            summary = tool.description.splitlines()[0] if tool.description else ""
            lines.append(f"  {tool_name(name, tool.name)}  [{marks}]  {summary}")
        write_stdout("\n".join(lines) + "\n")
    finally:
        manager.close()


@app.command("serve")
def serve(
    ctx: typer.Context,
    http: Annotated[
        str | None,
        typer.Option("--http", metavar="HOST:PORT", help="serve streamable HTTP instead of stdio"),
    ] = None,
) -> None:
    """Run Herald as an MCP server (stdio by default; --http needs a strong bearer token
    in the secret named by mcp.serve.token_env: herald secrets new HERALD_MCP_TOKEN --for mcp)."""
    from herald.gateway.platforms.web import login_token_matcher
    from herald.mcp.server import ServeError, serve_http, serve_stdio

    settings = load(ctx)
    try:
        if http is None:
            serve_stdio(settings)
        else:
            hashed = login_token_matcher(settings.home.root)  # no reuse of the web login
            serve_http(settings, http, announce=err_console().print, matches_hashed=hashed)
    except ServeError as exc:
        fail(str(exc))


def acp(ctx: typer.Context) -> None:
    """Speak the Agent Client Protocol over stdio, for editors (Zed and others)."""
    from herald.acp import run_acp

    settings = load(ctx)
    run_acp(settings)
