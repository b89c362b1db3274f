"""The default configs shipped with the package, and how a ``--config`` argument finds them.

The one copy of every default config is the top-level ``configs/`` folder of the source tree
(``configs/rules/*.yaml``: rule defaults, ``configs/train/*.yaml``: training recipes);
``agents/configs`` links to it, so wheels ship it as package data (``agents/configs/...``).

:func:`find_config` accepts what the README shows (``configs/train/quickstart.yaml``) from any
directory, even where no such file exists because the package was installed from a wheel:

>>> find_config("configs/train/quickstart.yaml").name
'quickstart.yaml'
>>> find_config("quickstart").resolve() == find_config("configs/train/quickstart.yaml").resolve()
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dice_envs.rules import ConfigError

__all__ = ["CONFIG_DIR", "available_configs", "find_config", "read_recipe"]

#: The shipped configs (``rules/`` and ``train/``).
CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"


def available_configs(kind: str) -> list[str]:
    """Names (stems) of the shipped configs of ``kind`` (``"rules"`` or ``"train"``)."""
    return sorted(p.stem for p in (CONFIG_DIR / kind).glob("*.yaml"))


def find_config(path: str | Path, kind: str = "train") -> Path:
    """The config file ``path`` names: an existing file, a ``configs/<kind>/...`` path of the
    shipped configs, or the bare name of a shipped config (``quickstart``). ``ConfigError`` lists
    the shipped ones when nothing fits."""
    p = Path(path).expanduser()
    if p.is_file():
        return p
    parts = p.parts
    if len(parts) >= 2 and parts[0] == "configs":
        shipped = CONFIG_DIR.joinpath(*parts[1:])
        if shipped.is_file():
            return shipped
    if len(parts) == 1:
        for candidate in (CONFIG_DIR / kind / parts[0], CONFIG_DIR / kind / f"{parts[0]}.yaml"):
            if candidate.is_file():
                return candidate
    known = ", ".join(available_configs(kind)) or "none"
    raise ConfigError(f"config file not found: {path} (shipped {kind} configs: {known})")


def read_recipe(path: str | Path) -> dict[str, Any]:
    """The mapping of keys of the training recipe ``path`` (found by :func:`find_config`).

    A key given twice and a file with no keys are refused: YAML would keep the last value, or
    train every default, without a word. ``ConfigError`` names the file and what is wrong.
    """
    import yaml

    from dice_envs.rules.config import yaml_value

    try:
        path = find_config(path, "train")
    except ConfigError as exc:
        raise ConfigError(f"training {exc}") from None
    try:
        data = yaml_value(path.read_text(encoding="utf-8"))
        if data is None:
            raise ConfigError(
                f"{path}: the file holds no config keys (an empty recipe would train every default); "
                "start from one of configs/train/*.yaml"
            )
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1}, column {where.column + 1})" if where is not None else ""
        raise ConfigError(f"{path}: not valid YAML{at}: {getattr(exc, 'problem', exc)}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the training config: {exc.strerror}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys, got {type(data).__name__}")
    return data
