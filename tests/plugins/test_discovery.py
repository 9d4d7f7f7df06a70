"""Where plugins come from: bundled ones load without being enabled (unless disabled),
a later source replaces an earlier one of the same name, broken manifests are named."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_support import write_plugin

from herald.config import HeraldConfig, HeraldHome
from herald.plugins import discover, load_plugins

CODE = 'def register(ctx):\n    ctx.register_slash_command("src", lambda: "%s")\n'


def _config(**plugins) -> HeraldConfig:
    return HeraldConfig.model_validate({"plugins": plugins})


def test_bundled_plugins_load_unless_disabled_and_user_ones_replace_them(tmp_path: Path):
    bundled = tmp_path / "bundled"
    home = HeraldHome(tmp_path / "home").ensure()
    write_plugin(bundled, "core-extras", CODE % "bundled")
    loaded = load_plugins(_config(), home, bundled_dir=bundled)
    assert loaded.slash_commands["src"].handler() == "bundled"
    assert not load_plugins(_config(disabled=["core-extras"]), home, bundled_dir=bundled)
    write_plugin(home.plugins_dir, "core-extras", CODE % "user")
    found = discover(user_dir=home.plugins_dir, bundled_dir=bundled)
    assert found["core-extras"].source == "user" and found["core-extras"].shadowed == ("bundled",)
    # Bundled loads without being enabled; a user copy of it is a user plugin (opt-in).
    assert not load_plugins(_config(), home, bundled_dir=bundled)
    again = load_plugins(_config(enabled=["core-extras"]), home, bundled_dir=bundled)
    assert again.slash_commands["src"].handler() == "user"


def test_broken_manifests_are_named_with_the_fix(tmp_path: Path):
    home = HeraldHome(tmp_path / "home").ensure()
    write_plugin(home.plugins_dir, "mismatch", CODE % "x")
    (home.plugins_dir / "mismatch" / "plugin.yaml").write_text("name: other\n")
    (home.plugins_dir / "badyaml").mkdir()
    (home.plugins_dir / "badyaml" / "plugin.yaml").write_text("name: [unclosed\n")
    write_plugin(home.plugins_dir, "nocode", CODE % "x")
    (home.plugins_dir / "nocode" / "__init__.py").unlink()
    loaded = load_plugins(_config(enabled=["mismatch", "badyaml", "nocode"]), home)
    messages = {f.name: f.message for f in loaded.failures}
    assert "plugin.yaml names 'other' but the directory is 'mismatch'" in messages["mismatch"]
    assert "cannot read" in messages["badyaml"] and "fix plugin.yaml" in messages["badyaml"]
    assert "no __init__.py with a register(ctx) function" in messages["nocode"]


@pytest.mark.parametrize("name", ["demo", "My-Plugin"])
def test_the_skeleton_loads_and_its_own_test_passes(tmp_path: Path, name: str):
    import subprocess
    import sys

    from herald.plugins.skeleton import write_skeleton

    home = HeraldHome(tmp_path / "home").ensure()
    path = write_skeleton(home.plugins_dir, name)
    loaded = load_plugins(_config(enabled=[name]), home)
    assert name in loaded.loaded and not loaded.messages()
    func = name.replace("-", "_").lower()
    assert [t.name for t in loaded.tools] == [f"{func}_echo"]
    hook = loaded.hooks.context_for(user_text=f"what does {name} do?")
    assert hook == [f"The {name} plugin is installed; its tool is {func}_echo."]
    test = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=path,
    )
    assert test.returncode == 0, test.stdout + test.stderr
