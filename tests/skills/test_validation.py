"""SKILL.md parsing and validation: good skills load, bad ones get clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from skill_support import skill_text, write_skill

from herald.skills import SkillValidationError, validate_skill_dir, validate_skill_text
from herald.skills.validation import set_created_by

FULL = """---
name: deploy-docs
description: Build and publish the docs site
version: 1.2.0
platforms: [linux, darwin]
metadata:
  herald:
    category: Software
    tags: [Docs, release]
related_skills: [git-commit]
author: Ada
license: MIT
created_by: agent
---
# Deploy

1. Build.
"""


def test_full_front_matter_is_normalised() -> None:
    meta, body = validate_skill_text(FULL, dir_name="deploy-docs")
    assert meta.name == "deploy-docs"
    assert meta.description == "Build and publish the docs site"
    assert meta.version == "1.2.0"
    assert meta.platforms == ("linux", "macos")
    assert meta.tags == ("docs", "release")
    assert meta.category == "software"
    assert meta.related_skills == ("git-commit",)
    assert (meta.author, meta.license, meta.created_by) == ("Ada", "MIT", "agent")
    assert body.startswith("# Deploy")


def test_unknown_fields_from_other_agents_are_tolerated() -> None:
    text = skill_text(
        "pdf-tools",
        extra="allowed-tools: [Bash, Read]\ncompatibility: claude\nmetadata:\n  version: 2",
    )
    meta, _ = validate_skill_text(text, dir_name="pdf-tools")
    assert meta.extra == {"allowed-tools": ["Bash", "Read"], "compatibility": "claude"}
    assert meta.warnings == ()


def test_bad_yaml_names_the_file_line() -> None:
    text = "---\nname: x\ndescription: fine\nversion: 1\ntags: [a, b\n---\nbody\n"
    with pytest.raises(SkillValidationError) as err:
        validate_skill_text(text)
    message = str(err.value)
    assert "bad YAML" in message and "line " in message
    # The unclosed list starts on file line 5; the parser reports it at or after that.
    line = int(message.split("line ")[1].split(":")[0])
    assert 5 <= line <= 7


def test_yaml_error_line_is_the_file_line() -> None:
    text = "---\nname: x\ndescription: a: b: c\nversion: 1\n---\nbody\n"
    with pytest.raises(SkillValidationError, match=r"line 3: bad YAML.*quote values"):
        validate_skill_text(text)


def test_missing_front_matter_and_unclosed_block() -> None:
    with pytest.raises(SkillValidationError, match="must start with YAML front matter"):
        validate_skill_text("# just markdown\n")
    with pytest.raises(SkillValidationError, match="never closed"):
        validate_skill_text("---\nname: x\n")


def test_missing_name_and_description_are_both_reported() -> None:
    with pytest.raises(SkillValidationError) as err:
        validate_skill_text("---\nversion: 1.0.0\n---\nbody\n")
    assert len(err.value.problems) == 2
    assert "name: missing" in str(err.value) and "description: missing" in str(err.value)


def test_over_long_description_is_refused_with_the_limit() -> None:
    text = skill_text("x", "A" * 61)
    with pytest.raises(SkillValidationError, match="61 characters, the limit is 60"):
        validate_skill_text(text)
    assert validate_skill_text(skill_text("x", "A" * 60))[0].description == "A" * 60


def test_lenient_mode_warns_instead_for_external_skills() -> None:
    text = skill_text("x", "A long description an external agent wrote " * 3, version=None)
    meta, _ = validate_skill_text(text, strict=False)
    assert meta.version == "0"
    assert any("limit is 60" in w for w in meta.warnings)
    with pytest.raises(SkillValidationError, match="version: missing"):
        validate_skill_text(skill_text("x", version=None))


def test_name_must_match_directory_and_be_well_formed() -> None:
    with pytest.raises(SkillValidationError, match="does not match the directory 'other'"):
        validate_skill_text(skill_text("mine"), dir_name="other")
    with pytest.raises(SkillValidationError, match="not a valid skill name"):
        validate_skill_text(skill_text("../escape"))
    with pytest.raises(SkillValidationError, match="not a valid skill name"):
        validate_skill_text(skill_text("Has Spaces"))


def test_empty_body_and_wrong_types() -> None:
    with pytest.raises(SkillValidationError, match="the body is empty"):
        validate_skill_text(skill_text("x", body="\n  \n"))
    with pytest.raises(SkillValidationError, match="related_skills: expected a list"):
        validate_skill_text(skill_text("x", extra="related_skills: {a: 1}"))
    with pytest.raises(SkillValidationError, match="expected 'key: value' fields"):
        validate_skill_text("---\n- a\n- b\n---\nbody\n")


def test_unknown_platform_is_a_warning() -> None:
    meta, _ = validate_skill_text(skill_text("x", extra="platforms: [linux, amiga]"))
    assert meta.platforms == ("linux",)
    assert any("amiga" in w for w in meta.warnings)


def test_validate_dir_accepts_dir_or_file_and_reports_the_path(tmp_path: Path) -> None:
    skill_dir = write_skill(tmp_path, "good")
    assert validate_skill_dir(skill_dir)[0].name == "good"
    assert validate_skill_dir(skill_dir / "SKILL.md")[0].name == "good"
    bad = write_skill(tmp_path, "bad", skill_text("wrong"))
    with pytest.raises(SkillValidationError) as err:
        validate_skill_dir(bad)
    assert str(bad / "SKILL.md") in str(err.value)
    with pytest.raises(SkillValidationError, match=r"no SKILL\.md"):
        validate_skill_dir(tmp_path)


def test_set_created_by_edits_only_that_field() -> None:
    text = skill_text("x", extra="created_by: owner\nauthor: Ada  # keep me")
    updated = set_created_by(text, "agent")
    assert "created_by: owner" not in updated
    assert "author: Ada  # keep me" in updated
    meta, body = validate_skill_text(updated)
    assert meta.created_by == "agent" and body == validate_skill_text(text)[1]
    assert validate_skill_text(set_created_by(updated, None))[0].created_by is None
