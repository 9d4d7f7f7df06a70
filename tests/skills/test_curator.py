"""The curator with a fake clock: stale, archived, exemptions, snapshots and rollback."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest
from skill_support import FakeClock, skill_text, write_skill

from herald.config import Settings
from herald.skills import (
    Curator,
    SkillLibrary,
    SkillManageError,
    SnapshotError,
    archived_skills,
    create_skill,
)
from herald.testing.homes import make_home


def agent_skill(library: SkillLibrary, name: str) -> None:
    create_skill(library, name, skill_text(name), created_by="agent")


@pytest.fixture
def curator(library: SkillLibrary, settings: Settings, clock: FakeClock) -> Curator:
    return Curator(library, settings.config, settings.home, clock)


def test_due_follows_the_interval(curator: Curator, clock: FakeClock, tmp_path: Path) -> None:
    assert curator.due()  # never ran
    assert curator.maybe_run() is not None
    assert not curator.due() and curator.maybe_run() is None
    clock.advance(hours=23.9)
    assert not curator.due()
    clock.advance(hours=0.1)
    assert curator.due()
    off = make_home(tmp_path / "off", {"curator": {"enabled": False}})
    assert not Curator(SkillLibrary(off.home, off.config), off.config).due()


def test_config_rejects_archiving_before_stale(tmp_path: Path) -> None:
    from herald.config import ConfigError

    with pytest.raises(ConfigError, match="archive_after_days"):
        make_home(tmp_path / "h", {"curator": {"stale_after_days": 30, "archive_after_days": 10}})


def test_unused_agent_skill_goes_stale_then_archived(
    curator: Curator, library: SkillLibrary, clock: FakeClock
) -> None:
    agent_skill(library, "one-off")
    clock.advance(days=29)
    assert curator.run().stale == []
    clock.advance(days=2)
    report = curator.run()
    assert report.stale == ["one-off"] and report.archived == {}
    assert library.get("one-off").state == "stale"
    assert library.get("one-off") is not None  # stale skills stay usable
    clock.advance(days=60)
    report = curator.run()
    archived = report.archived["one-off"]
    assert archived.parent == library.skills_dir / ".archive" and (archived / "SKILL.md").is_file()
    assert library.get("one-off") is None
    assert [a.name for a in archived_skills(library)] == ["one-off"]


def test_activity_keeps_a_skill_alive(
    curator: Curator, library: SkillLibrary, clock: FakeClock
) -> None:
    agent_skill(library, "handy")
    clock.advance(days=40)
    assert curator.run().stale == ["handy"]
    library.record("handy", "view")  # used again: active at once
    assert library.get("handy").state == "active"
    clock.advance(days=80)
    report = curator.run()
    assert report.archived == {} and report.stale == ["handy"]


def test_a_stale_mark_is_lifted_by_the_curator_after_use(
    curator: Curator, library: SkillLibrary, clock: FakeClock
) -> None:
    agent_skill(library, "revived")
    clock.advance(days=40)
    curator.run()
    library.usage.set_state({"revived": "stale"})
    library.record("revived", "use")
    library.usage.set_state({"revived": "stale"})  # a stale mark that outlived the use
    assert curator.run().reactivated == ["revived"]
    assert library.get("revived").state == "active"


def test_pinned_owner_bundled_and_external_skills_are_never_touched(
    tmp_path: Path, bundled: Path, clock: FakeClock
) -> None:
    external = tmp_path / "ext"
    write_skill(external, "ext-agent", extra="created_by: agent")
    settings = make_home(tmp_path / "home", {"skills": {"external_dirs": [str(external)]}})
    write_skill(bundled, "bundled-agent", extra="created_by: agent")
    library = SkillLibrary(settings.home, settings.config, bundled_dir=bundled, clock=clock)
    curator = Curator(library, settings.config, settings.home, clock)
    agent_skill(library, "pinned-one")
    agent_skill(library, "doomed")
    write_skill(settings.home.skills_dir, "owners")
    curator.pin("pinned-one")

    clock.advance(days=1000)
    report = curator.run()
    assert list(report.archived) == ["doomed"]
    assert report.skipped == {
        "pinned-one": "pinned",
        "owners": "written by the owner",
        "bundled-agent": "bundled",
        "ext-agent": "external",
    }
    assert {s.name for s in library.skills()} == {
        "pinned-one",
        "owners",
        "bundled-agent",
        "ext-agent",
    }
    assert library.get("pinned-one").pinned
    curator.unpin("pinned-one")
    clock.advance(days=1)
    assert list(curator.run().archived) == ["pinned-one"]
    with pytest.raises(SkillManageError, match="bundled skill; the curator never touches"):
        curator.pin("bundled-agent")


def test_age_falls_back_to_the_file_time_without_usage(
    curator: Curator, library: SkillLibrary, clock: FakeClock
) -> None:
    skill_dir = write_skill(library.skills_dir, "hand-made", extra="created_by: agent")
    old = clock() - 100 * 86_400
    os.utime(skill_dir / "SKILL.md", (old, old))
    assert list(curator.run().archived) == ["hand-made"]


def test_snapshot_then_rollback_round_trip(
    curator: Curator, library: SkillLibrary, clock: FakeClock
) -> None:
    agent_skill(library, "precious")
    original = (library.skills_dir / "precious" / "SKILL.md").read_bytes()
    clock.advance(days=100)
    report = curator.run()
    assert "precious" in report.archived
    assert report.snapshot is not None and report.snapshot.name.endswith(".tar.gz")
    with tarfile.open(report.snapshot) as tar:
        assert "precious/SKILL.md" in tar.getnames()

    result = curator.rollback()
    assert result.snapshot == report.snapshot and result.restored == ["precious"]
    assert (library.skills_dir / "precious" / "SKILL.md").read_bytes() == original
    assert library.get("precious") is not None
    assert not (library.skills_dir / ".archive").exists()  # as it was before the run
    assert result.safety_snapshot.name.endswith("-before-rollback.tar.gz")
    # Rolled-back skills count as fresh, so the next run does not archive them at once.
    clock.advance(days=1)
    assert curator.run().archived == {}
    # And the rollback itself can be undone from the safety snapshot.
    curator.rollback(result.safety_snapshot.name)
    assert library.get("precious") is None


def test_snapshots_are_pruned_to_keep_snapshots(tmp_path: Path, clock: FakeClock) -> None:
    settings = make_home(tmp_path / "home", {"curator": {"keep_snapshots": 2}})
    library = SkillLibrary(settings.home, settings.config, clock=clock)
    curator = Curator(library, settings.config, clock=clock)
    for _ in range(4):
        curator.run()
        clock.advance(hours=25)
    snapshots = curator.snapshots()
    assert len(snapshots) == 2
    assert snapshots[-1].stamp > snapshots[0].stamp


def test_snapshots_in_the_same_second_get_distinct_names(curator: Curator) -> None:
    first = curator.run().snapshot
    second = curator.run().snapshot
    assert first != second and [s.path for s in curator.snapshots()] == [first, second]


def _evil_snapshot(folder: Path, name: str, member: tarfile.TarInfo) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with tarfile.open(path, "w:gz") as tar:
        ok = tarfile.TarInfo("fine/SKILL.md")
        data = skill_text("fine").encode()
        ok.size = len(data)
        tar.addfile(ok, io.BytesIO(data))
        if member.isfile():
            tar.addfile(member, io.BytesIO(b"x" * member.size))
        else:
            tar.addfile(member)
    return path


@pytest.mark.parametrize(
    "member_name,kind",
    [
        ("../escaped.md", tarfile.REGTYPE),
        ("/abs/escaped.md", tarfile.REGTYPE),
        ("link", tarfile.SYMTYPE),
    ],
)
def test_rollback_refuses_unsafe_snapshots(
    curator: Curator, library: SkillLibrary, member_name: str, kind: bytes
) -> None:
    agent_skill(library, "still-here")
    member = tarfile.TarInfo(member_name)
    member.type = kind
    if kind == tarfile.SYMTYPE:
        member.linkname = "/etc/passwd"
    else:
        member.size = 1
    snapshot = _evil_snapshot(library.skills_dir / ".snapshots", "20990101T000000Z.tar.gz", member)
    with pytest.raises(SnapshotError, match="nothing was restored"):
        curator.rollback(snapshot.name)
    assert library.get("still-here") is not None and library.get("fine") is None
    assert not (library.skills_dir.parent / "escaped.md").exists()


def test_rollback_without_snapshots_and_unknown_names(curator: Curator) -> None:
    with pytest.raises(SnapshotError, match="no skill snapshots yet"):
        curator.rollback()
    curator.run()
    with pytest.raises(SnapshotError, match="no snapshot 'nope'"):
        curator.rollback("nope")


def test_restore_brings_back_the_newest_archived_copy(
    curator: Curator, library: SkillLibrary, clock: FakeClock
) -> None:
    agent_skill(library, "again")
    clock.advance(days=100)
    curator.run()
    result = curator.restore("again")
    assert result.path == library.skills_dir / "again" and library.get("again") is not None
    assert library.usage.get("again").last_activity == clock()
    with pytest.raises(SkillManageError, match="no archived skill 'again'"):
        curator.restore("again")
    agent_skill(library, "twin")
    library_dir = library.skills_dir / "twin"
    curator_archive = curator.library.skills_dir / ".archive"
    from herald.skills import archive_skill

    archive_skill(library, "twin")
    agent_skill(library, "twin")
    with pytest.raises(SkillManageError, match="exists already"):
        curator.restore("twin")
    assert library_dir.is_dir() and any(curator_archive.iterdir())
