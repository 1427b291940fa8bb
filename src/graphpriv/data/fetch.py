"""Finding raw dataset files: ``$GRAPHPRIV_DATA`` mirror, then the user cache, then download.

Every file is checked against its published sha256 before it is read (TLS verification stays on;
a download goes to a temporary name and is moved into the cache only after the check).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from graphpriv.errors import ChecksumError, DatasetError

ENV_MIRROR = "GRAPHPRIV_DATA"
ENV_CACHE = "GRAPHPRIV_CACHE"
ENV_OFFLINE = "GRAPHPRIV_OFFLINE"


@dataclass(frozen=True)
class RawFile:
    """One published raw file: ``<source>/<name>`` in the mirror layout, its URL and sha256."""

    source: str
    name: str
    url: str
    sha256: str

    @property
    def relpath(self) -> str:
        """``source/name``."""
        return f"{self.source}/{self.name}"


def cache_dir() -> Path:
    """``$GRAPHPRIV_CACHE``, else ``${XDG_CACHE_HOME:-~/.cache}/graphpriv`` (the numba cache's
    root too, :mod:`graphpriv.linkpred._numba_cache`)."""
    root = os.environ.get(ENV_CACHE)
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "graphpriv"


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified(path: Path, raw: RawFile) -> Path:
    actual = sha256_of(path)
    if actual != raw.sha256:
        raise ChecksumError(
            f"checksum mismatch for {path}: expected sha256 {raw.sha256}, got {actual}. The file is "
            f"corrupt or a different version; delete it and fetch it again from {raw.url}"
        )
    return path


def candidates(raw: RawFile) -> list[Path]:
    """Where :func:`locate` looks, in order (mirror first when ``$GRAPHPRIV_DATA`` is set)."""
    found = []
    if os.environ.get(ENV_MIRROR):
        found.append(Path(os.environ[ENV_MIRROR]) / raw.source / raw.name)
    found.append(cache_dir() / raw.source / raw.name)
    return found


def locate(raw: RawFile) -> Path:
    """Path of a verified copy of ``raw``, downloading it into the cache when needed.

    Raises:
        ChecksumError: a found or downloaded file does not match its sha256.
        DatasetError: the file is nowhere and cannot be downloaded (message names file, URL and
            ``GRAPHPRIV_DATA``).
    """
    for path in candidates(raw):
        if path.is_file():
            return _verified(path, raw)
    target = cache_dir() / raw.source / raw.name
    if os.environ.get(ENV_OFFLINE):
        reason = f"{ENV_OFFLINE} is set"
    else:
        try:
            return _download(raw, target)
        except ChecksumError:
            raise
        except Exception as exc:  # noqa: BLE001 - network errors come in many types
            reason = f"download failed: {exc}"
    raise DatasetError(
        f"raw file {raw.relpath} not found (looked in {', '.join(map(str, candidates(raw)))}) and "
        f"{reason}. Download {raw.url} into {target.parent}/, or set {ENV_MIRROR} to a mirror "
        f"folder laid out as <source>/<file> (e.g. {ENV_MIRROR}=/path/to/mirror)."
    )


def _download(raw: RawFile, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    with (tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as tmp,
          urllib.request.urlopen(raw.url, timeout=30) as response):
        shutil.copyfileobj(response, tmp)
    tmp_path = Path(tmp.name)
    try:
        _verified(tmp_path, raw)
    except ChecksumError:
        tmp_path.unlink(missing_ok=True)
        raise
    tmp_path.replace(target)
    return target
