"""The one rule for paths a release names and for file names a build derives from release data.

A release is untrusted input (DESIGN principle 6): a tampered one must not make a builder read,
embed and publish other files of the machine, nor write outside ``--out``.

- `resolve_inside`: every path a release names (an image file, a CSV's ``image_path``, a card's
  ``data_files``, a ``save_to_disk`` state's .arrow files) resolves, symbolic links followed, inside
  the release's folder. ``..`` chains, absolute paths, Windows-style ``..\\`` and drive paths, links
  that point out and NUL bytes are a `BadRecord` naming the record and field (skipped or fatal like
  any bad record). ``~`` is never expanded: in a release it is a folder name like any other.
  `files_inside` applies it to the files a builder globs in a release folder (a link out is refused).
- `safe_file_name`: a name taken from release data (ARB's model names, from CSV headers) becomes
  one file name: separators, ``%``, control characters and a leading dot are %-escaped
  (reversibly, so two names never meet), and an empty or over-long name is an error.
- `inside`: the last check before a build opens a file for writing: it is inside ``--out``.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path, PurePosixPath, PureWindowsPath

from arab_mm_tasks.core.records import BadRecord
from arab_mm_tasks.core.spec import SourceError

# A file system takes 255 bytes a name; a derived name leaves room for its suffix (``.jsonl``) and a temporary one.
MAX_DERIVED_NAME_BYTES = 200
_ESCAPED = frozenset('/\\%:*?"<>|')  # separators (POSIX and Windows), our escape character, Windows' reserved


def resolve_inside(
    root: str | os.PathLike[str] | None,
    name: object,
    *,
    record: str,
    field: str,
    error: type[BadRecord] = BadRecord,
    absolute_ok: bool = False,
) -> Path:
    """The file `name` (a path a release gives) names under `root`, resolved; else `error(record, field, ...)`.

    `absolute_ok` admits an absolute path as it is, for the one released form that writes them
    (GIMMICK vvqa's ``video_fn``, a path into the authors' loader cache); the caller still decodes it.
    Whether the file exists is the caller's to check with `is_file` (its message names the kind of file):
    a name the OS refuses (over 255 bytes) is no file.
    """
    if not isinstance(name, str):
        raise error(record, field, f"is {name!r:.80}, not a file name")
    if not name.strip():
        raise error(record, field, "is an empty file name")
    if "\x00" in name:
        raise error(record, field, f"{name!r:.200} holds a NUL byte, which no file name can")
    posix = name.replace("\\", "/")  # `..\x` is `../x` on Windows, where the release may come from
    if PurePosixPath(posix).is_absolute() or PureWindowsPath(name).drive:
        if absolute_ok:
            return Path(posix)
        raise error(record, field, f"is the absolute path {name!r:.200}; give it relative to the release's folder")
    if root is None:
        raise error(record, field, f"is the relative path {name!r:.200}, but the source has no folder")
    try:
        file = (Path(root) / posix).resolve()
    except (OSError, RuntimeError) as err:  # a link loop (RuntimeError before Python 3.13), a path too long
        raise error(record, field, f"{name!r:.200} cannot be resolved ({err})") from None
    if not any(file.is_relative_to(allowed) for allowed in _allowed_roots(Path(root))):
        raise error(record, field, f"names {name!r:.200}, which points outside the release's folder")
    return file


def _allowed_roots(root: Path) -> list[Path]:
    """`root` resolved, plus, for a release in the Hugging Face cache, its repo's ``blobs/`` folder.

    ``snapshot_download`` leaves ``snapshots/<commit>/<file>`` as links to ``../../blobs/<hash>``:
    files of the same repo, so a link there is not a way out.
    """
    resolved = root.resolve()
    allowed = [resolved]
    for folder in (resolved, *resolved.parents):
        if folder.parent.name == "snapshots" and (folder.parent.parent / "blobs").is_dir():
            allowed.append(folder.parent.parent / "blobs")
            break
    return allowed


def files_inside(root: Path, files: list[Path], *, what: str) -> list[Path]:
    """`files` found under a release folder `root` (a glob), each kept inside it: a link out is a `SourceError`."""
    kept = []
    for file in files:
        try:
            kept.append(resolve_inside(root, os.path.relpath(file, root), record=what, field="files"))
        except BadRecord as err:
            raise SourceError(str(err)) from None
    return kept


def is_file(file: Path) -> bool:
    """`Path.is_file`, but False for a name the OS refuses (ENAMETOOLONG, which pathlib re-raises)."""
    try:
        return file.is_file()
    except OSError:
        return False


def safe_file_name(name: str, *, what: str) -> str:
    """`name` (from release data) as one file name; a `SourceError` naming `what` when it cannot be one.

    Separators, ``%``, Windows' reserved characters, control and format characters, and a leading
    dot (``.``, ``..``, hidden files) are written ``%XX`` (their UTF-8 bytes), so ``../../x`` is
    ``%2E.%2F..%2Fx`` and ``/abs/dir/PWNED`` is ``%2Fabs%2Fdir%2FPWNED``: names inside the folder they
    are joined to, distinct for distinct names (``%`` itself is escaped).
    """
    if not name or not name.strip():
        raise SourceError(f"{what} is {name!r}: an empty name cannot name a file")
    escaped = "".join(
        _escape(char) if char in _ESCAPED or unicodedata.category(char)[0] == "C" or (i == 0 and char == ".") else char
        for i, char in enumerate(name)
    )
    if len(escaped.encode("utf-8")) > MAX_DERIVED_NAME_BYTES:
        raise SourceError(
            f"{what} is {name!r:.80}...: too long to name a file ({len(escaped.encode('utf-8'))} bytes as a file "
            f"name, at most {MAX_DERIVED_NAME_BYTES})"
        )
    return escaped


def _escape(char: str) -> str:
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))


def inside(out_dir: str | os.PathLike[str], file: str | os.PathLike[str]) -> Path:
    """`file`, after checking that it resolves inside `out_dir` (the last check before writing it)."""
    target = Path(file).resolve()
    if not target.is_relative_to(Path(out_dir).resolve()):
        raise SourceError(f"refusing to write {file}: it is outside the output folder {out_dir}")
    return Path(file)
