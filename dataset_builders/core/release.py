"""Fetching an authors' release from the Hub, with one-line errors that say what to do.

A release is downloaded with `huggingface_hub.snapshot_download` into the Hugging Face cache
and read from there as a local folder, so the builders have one reading path for the Hub and for
local copies, and a release downloaded once builds again offline.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from pathlib import Path

from arab_mm_tasks.core.records import ReleaseUnavailable as ReleaseUnavailable  # re-exported: raised here

# What a builder reads from a release; model cards, images of the paper and the like are not fetched.
RELEASE_FILES = ["*.parquet", "**/*.parquet", "*.arrow", "**/*.arrow", "*.json", "**/*.json", "*.jsonl", "**/*.jsonl"]
RELEASE_FILES += ["README.md", "*.py"]  # the card declares configs; a loading script is detected and refused


def at_revision(repo_id: str, revision: str | None) -> str:
    """A builder's Hub source argument: ``owner/name@revision``, or the repo alone for its default branch."""
    return repo_id + (f"@{revision}" if revision else "")


def hub_url(repo_id: str) -> str:
    return f"https://huggingface.co/datasets/{repo_id}"


def download_release(repo_id: str, revision: str | None = None) -> Path:
    """The local folder of a Hub dataset repo at `revision` (downloaded, or from the cache when offline)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    at = f"{repo_id}@{revision}" if revision else repo_id
    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision, allow_patterns=RELEASE_FILES))
    except GatedRepoError:
        raise ReleaseUnavailable(
            f"{at} is gated: accept its conditions at {hub_url(repo_id)}, then log in (`hf auth login` or HF_TOKEN)"
        ) from None
    except RevisionNotFoundError:
        raise ReleaseUnavailable(f"{repo_id} has no revision {revision!r} ({hub_url(repo_id)})") from None
    except RepositoryNotFoundError:
        raise ReleaseUnavailable(
            f"{at} was not found on the Hub, or it is private and you are not logged in (`hf auth login`)"
        ) from None
    except LocalEntryNotFoundError:
        raise ReleaseUnavailable(
            f"the Hub is unreachable (offline, or HF_HUB_OFFLINE=1) and {at} is not in the Hugging Face cache"
        ) from None
    except OSError as err:  # the Hub answered with an error (5xx), a proxy failed, the disk is full, ...
        reason = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
        raise ReleaseUnavailable(f"could not fetch {at}: {reason}") from None


# ---------------------------------------------------------------------------- command-line arguments

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*(@[\w./-]+)?$")
_FILE_SUFFIXES = (".jsonl", ".json", ".parquet", ".csv", ".xz", ".arrow", ".txt")


class PathArgument:
    """An argparse ``type`` that checks a file or folder argument of ``arab-mm-tasks build`` up front.

    Every such argument of every builder goes through here, so a wrong one is one line before anything
    is read or written (argparse prints ``argument --X: <problem>``), never a traceback later:

    - ``"source"``: a Hub id ``owner/name[@revision]``, or an existing folder, or an existing file
      ending in one of `suffixes`;
    - ``"file"``: an existing, readable file ending in one of `suffixes` (UTF-8 text with `text`; a
      ``.parquet`` file must have a parquet footer, so a cut or foreign file is refused here too);
    - ``"folder"``: an existing folder;
    - ``"out"``: a folder to write: absent, or a folder (not a file, and not under a file);
    - ``"out-file"``: a file to write: absent or a file, in a folder that exists.

    The value is returned unchanged (a string), so builders take it as they always did.
    """

    def __init__(self, kind: str, suffixes: tuple[str, ...] = (), *, text: bool = False) -> None:
        self.kind, self.suffixes, self.text = kind, suffixes, text
        self.__name__ = f"{kind} path"  # what argparse names in its own messages

    def __call__(self, value: str) -> str:
        problem = getattr(self, "_" + self.kind.replace("-", "_"))(value, Path(value).expanduser())
        if problem:
            raise argparse.ArgumentTypeError(f"{value!r:.300}: {problem}")
        return value

    def _source(self, value: str, path: Path) -> str | None:
        if _exists(path):
            return None if path.is_dir() else self._file(value, path)
        if _HUB_ID.match(value) and not value.partition("@")[0].endswith(_FILE_SUFFIXES):
            return None
        return (
            f"no such file or folder, and not a Hub dataset id owner/name[@revision] ({self._expected()} or a folder)"
        )

    def _file(self, value: str, path: Path) -> str | None:
        if not _exists(path):
            return "no such file"
        if path.is_dir():
            return f"is a folder; {self._expected()}"
        if self.suffixes and not value.lower().endswith(self.suffixes):
            return self._expected()
        if not os.access(path, os.R_OK):
            return "cannot be read (permission denied)"
        if value.lower().endswith(".parquet"):
            return _parquet_problem(path)
        if self.text:
            try:
                path.read_bytes().decode("utf-8")
            except UnicodeDecodeError as err:
                return f"is not UTF-8 text ({err.reason} at byte {err.start})"
            except OSError as err:
                return f"cannot be read ({err.strerror or err})"
        return None

    def _folder(self, value: str, path: Path) -> str | None:
        if not _exists(path):
            return "no such folder"
        return None if path.is_dir() else "is a file; expected a folder"

    def _out(self, value: str, path: Path) -> str | None:
        if _exists(path) and not path.is_dir():
            return "exists and is not a folder; choose a new or empty output folder"
        for parent in path.absolute().parents:
            if _exists(parent):
                return None if parent.is_dir() else f"cannot be created: {parent} is a file"
        return None

    def _out_file(self, value: str, path: Path) -> str | None:
        if path.is_dir():
            return "is a folder; expected a file name to write"
        return None if path.parent.is_dir() else f"cannot be written: {path.parent} is not a folder"

    def _expected(self) -> str:
        return f"expected a {' or '.join(self.suffixes)} file" if self.suffixes else "expected a file"


def _parquet_problem(path: Path) -> str | None:
    """Why a .parquet file cannot be read (its footer: 0 bytes, cut, not parquet), else None."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pq.read_metadata(path)
    except (pa.ArrowException, OSError) as err:
        return f"is not a readable parquet file ({' '.join(str(err).split())[:200]})"
    return None


def _exists(path: Path) -> bool:
    """`Path.exists`, False for a name the OS refuses (too long), which pathlib re-raises."""
    try:
        return path.exists()
    except (OSError, ValueError):  # ValueError: an embedded NUL byte
        return False


def path_argument(kind: str, *suffixes: str, text: bool = False) -> Callable[[str], str]:
    """`PathArgument` as a function, for ``parser.add_argument(..., type=path_argument("source", ".jsonl"))``."""
    return PathArgument(kind, suffixes, text=text)
