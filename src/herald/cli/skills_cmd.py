"""`herald skills list|show|validate|archive|restore|pin|unpin|rollback`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from herald.cli.common import fail, load, write_stdout

if TYPE_CHECKING:
    from collections.abc import Callable

    from herald.skills import Curator, ManageResult, Skill, SkillLibrary

app = typer.Typer(
    help="List, check and curate skills (home: skills/ in the Herald home).",
    no_args_is_help=True,
)

EXIT_INVALID = 1


def _library(ctx: typer.Context) -> SkillLibrary:
    from herald.skills import SkillLibrary

    settings = load(ctx)
    return SkillLibrary(settings.home, settings.config)


def _curator(library: SkillLibrary) -> Curator:
    from herald.skills import Curator

    return Curator(library)


def _status(skill: Skill) -> str:
    marks = []
    if skill.pinned:
        marks.append("pinned")
    if skill.state == "stale":
        marks.append("stale")
    if not skill.available:
        marks.append(f"{'/'.join(skill.platforms)} only")
    if skill.agent_created:
        marks.append("agent")
    return ", ".join(marks)


@app.command("list")
def list_skills(
    ctx: typer.Context,
    tag: Annotated[str | None, typer.Option(help="only skills with this tag")] = None,
    category: Annotated[str | None, typer.Option(help="only skills in this category")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Every skill with its source and state, then skills that could not be loaded."""
    from herald.cli.tables import Column, print_json, print_table

    library = _library(ctx)
    skills = [
        s
        for s in library.skills(include_unavailable=True)
        if (tag is None or tag.lower() in s.tags) and (category is None or s.category == category)
    ]
    if as_json:
        print_json({
            "skills": [
                {"name": s.name, "source": s.source, "category": s.category,
                 "status": _status(s), "description": s.description}
                for s in skills
            ],
            "not_loaded": [p.message for p in library.problems],
            "enabled": library.enabled,
        })  # fmt: skip
        return
    if skills:
        columns = [Column("name"), Column("source"), Column("category"),
                   Column("status", flex=True, fold=True), Column("description", flex=True)]  # fmt: skip
        print_table(
            columns, [(s.name, s.source, s.category, _status(s), s.description) for s in skills]
        )
    else:
        typer.echo("no skills match" if tag or category else "no skills yet")
    for shadow in library.shadowed:
        typer.echo(
            f"note: {shadow.loser_source} skill {shadow.name} ({shadow.loser}) is hidden by the "
            f"{shadow.winner_source} one"
        )
    for problem in library.problems:
        typer.echo(f"not loaded: {problem.message}")
    if not library.enabled:
        typer.echo("skills are disabled (skills.enabled: false): the model does not see them")


@app.command("show")
def show(ctx: typer.Context, name: Annotated[str, typer.Argument(help="skill name")]) -> None:
    """A skill's source, usage and whole SKILL.md."""
    library = _library(ctx)
    skill = library.get(name, include_unavailable=True)
    if skill is None:
        known = ", ".join(s.name for s in library.skills(include_unavailable=True)) or "none"
        fail(f"no skill named {name!r}; skills: {known}")
    usage = library.usage.get(skill.name)
    lines = [
        f"skill {skill.name} (version {skill.version})",
        f"source: {skill.source}   path: {skill.path}",
        f"category: {skill.category}   tags: {', '.join(skill.tags) or '-'}",
        f"created by: {skill.created_by or '-'}   status: {_status(skill) or 'active'}",
        f"views: {usage.views}   uses: {usage.uses}   patches: {usage.patches}",
    ]
    if skill.files:
        lines.append("files: " + ", ".join(skill.files))
    lines.append("")
    write_stdout("\n".join(lines) + "\n" + skill.skill_file.read_text(encoding="utf-8"))


def _validate_path(path: Path, lenient: bool) -> list[str]:
    """Problems of one skill directory (empty when it is valid and passes the scan)."""
    from herald.safety import scan_text
    from herald.skills import SKILL_FILE, SkillValidationError, validate_skill_dir

    try:
        meta, _ = validate_skill_dir(path, strict=not lenient)
    except SkillValidationError as exc:
        return [str(exc)]
    skill_dir = path.parent if path.name == SKILL_FILE else path
    scan = scan_text((skill_dir / SKILL_FILE).read_text(encoding="utf-8"), kind="skill")
    if scan.blocked:
        return [
            f"{skill_dir / SKILL_FILE}: refused by the injection scanner: {r}" for r in scan.reasons
        ]
    for warning in meta.warnings:
        typer.echo(f"warning: {skill_dir.name}: {warning}")
    typer.echo(f"ok: {meta.name} — {meta.description}")
    return []


@app.command("validate")
def validate(
    ctx: typer.Context,
    path: Annotated[
        Path | None, typer.Argument(help="a skill directory or SKILL.md; default: every skill")
    ] = None,
    lenient: Annotated[
        bool,
        typer.Option(help="check as an external skill (long description, no version: warnings)"),
    ] = False,
) -> None:
    """Check skills against the format rules and the injection scanner (exit 1 if not)."""
    if path is not None:
        problems = _validate_path(path.expanduser(), lenient)
    else:
        library = _library(ctx)
        for skill in library.skills(include_unavailable=True):
            typer.echo(f"ok: {skill.name} ({skill.source}) — {skill.description}")
        problems = [p.message for p in library.problems]
    if problems:
        for problem in problems:
            typer.echo(f"invalid: {problem}")
        raise typer.Exit(EXIT_INVALID)


def _run(action: str, fn: Callable[..., ManageResult], *args: object) -> None:
    from herald.skills import SkillManageError

    try:
        result = fn(*args)
    except SkillManageError as exc:
        fail(f"cannot {action}: {exc}")
    typer.echo(result.message)


@app.command("archive")
def archive(ctx: typer.Context, name: Annotated[str, typer.Argument(help="skill name")]) -> None:
    """Move a home skill to skills/.archive/ (restore brings it back)."""
    from herald.skills import archive_skill

    _run("archive", archive_skill, _library(ctx), name)


@app.command("restore")
def restore(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="skill name (newest archived copy) or archive dir")],
) -> None:
    """Bring an archived skill back to skills/."""
    library = _library(ctx)
    _run("restore", _curator(library).restore, name)


@app.command("pin")
def pin(ctx: typer.Context, name: Annotated[str, typer.Argument(help="skill name")]) -> None:
    """Exempt a home skill from the curator."""
    library = _library(ctx)
    _run("pin", _curator(library).pin, name)


@app.command("unpin")
def unpin(ctx: typer.Context, name: Annotated[str, typer.Argument(help="skill name")]) -> None:
    """Let the curator retire a skill again when it goes unused."""
    library = _library(ctx)
    _run("unpin", _curator(library).unpin, name)


@app.command("rollback")
def rollback(
    ctx: typer.Context,
    snapshot: Annotated[
        str | None, typer.Argument(help="snapshot file name; default: the newest curator one")
    ] = None,
    list_only: Annotated[
        bool, typer.Option("--list", help="list snapshots, change nothing")
    ] = False,
) -> None:
    """Restore skills/ from a snapshot taken before a curator run."""
    from herald.skills import SnapshotError

    library = _library(ctx)
    curator = _curator(library)
    if list_only:
        snapshots = curator.snapshots()
        if not snapshots:
            typer.echo("no snapshots yet: the curator takes one before each run")
        for s in snapshots:
            typer.echo(str(s.path))
        return
    try:
        report = curator.rollback(snapshot)
    except SnapshotError as exc:
        fail(str(exc))
    typer.echo(f"restored skills/ from {report.snapshot.name}")
    if report.restored:
        typer.echo("back: " + ", ".join(report.restored))
    typer.echo(f"the previous state is saved as {report.safety_snapshot.name}")
