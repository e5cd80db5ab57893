"""Fetching an authors' release from the Hub, with one-line errors that say what to do.

A release is downloaded with `huggingface_hub.snapshot_download` into the Hugging Face cache
and read from there as a local folder, so the builders have one reading path for the Hub and for
local copies, and a release downloaded once builds again offline.
"""

from __future__ import annotations

from pathlib import Path

# What a builder reads from a release; model cards, images of the paper and the like are not fetched.
RELEASE_FILES = ["*.parquet", "**/*.parquet", "*.arrow", "**/*.arrow", "*.json", "**/*.json", "*.jsonl", "**/*.jsonl"]
RELEASE_FILES += ["README.md", "*.py"]  # the card declares configs; a loading script is detected and refused


class ReleaseUnavailable(RuntimeError):
    """The release cannot be fetched; the message is one line that says why and what to do."""


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
