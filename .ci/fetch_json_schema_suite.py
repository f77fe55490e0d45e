"""Fetches the official JSON-Schema-Test-Suite that the sdist of jsonschema VERSION carries
(under json/) into DIR/jsonschema-VERSION/json, checked against a SHA-256.

One download of the sdist file, nothing built: `pip download --no-binary :all:` prepared the
sdist's metadata, which built its build backend and that backend's own requirements from source
(minutes on a cold machine). The tested version's file is pinned here (URL and SHA-256); any
other version is looked up on the package index (PEP 691 JSON), whose published SHA-256 is
checked instead.

Usage: python fetch_json_schema_suite.py VERSION DIR
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

#: version -> (URL, SHA-256) of the jsonschema sdist.
PINNED = {
    "4.26.0": (
        "https://files.pythonhosted.org/packages/b3/fc/"
        "e067678238fa451312d4c62bf6e6cf5ec56375422aee02f9cb5f909b3047/jsonschema-4.26.0.tar.gz",
        "0c26707e2efad8aa1bfc5b7ce170f3fccc2e4918ff85989ba9ffa9facb2be326",
    ),
}
INDEX = "https://pypi.org/simple"
TIMEOUT = 60


def _from_index(version: str) -> tuple[str, str]:
    request = urllib.request.Request(  # noqa: S310 - a constant https URL
        f"{INDEX}/jsonschema/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310
        files = json.load(response)["files"]
    name = f"jsonschema-{version}.tar.gz"
    for file in files:
        if file["filename"] == name:
            return urllib.parse.urljoin(f"{INDEX}/jsonschema/", file["url"]), file["hashes"][
                "sha256"
            ]
    raise SystemExit(f"fetch-json-schema-suite: {INDEX} lists no {name}")


def main(version: str, directory: Path) -> None:
    dest = directory / f"jsonschema-{version}"
    url, sha256 = PINNED.get(version) or _from_index(version)
    print(f"fetch-json-schema-suite: downloading the jsonschema {version} sdist into {directory}")
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".download.", dir=directory) as tmp:
        sdist = Path(tmp) / "sdist.tar.gz"
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response, sdist.open("wb") as out:  # noqa: S310
            shutil.copyfileobj(response, out)
        got = hashlib.sha256(sdist.read_bytes()).hexdigest()
        if got != sha256:
            raise SystemExit(f"fetch-json-schema-suite: {url} has SHA-256 {got}, not {sha256}")
        prefix = f"jsonschema-{version}/json/"
        with tarfile.open(sdist) as archive:
            members = [m for m in archive.getmembers() if m.name.startswith(prefix)]
            if hasattr(tarfile, "data_filter"):  # Python 3.11.4+
                archive.extractall(tmp, members=members, filter="data")
            else:  # pragma: no cover - the members were checked against the prefix
                archive.extractall(tmp, members=members)  # noqa: S202
        unpacked = Path(tmp) / f"jsonschema-{version}"
        if not (unpacked / "json" / "tests" / "draft2020-12").is_dir():
            raise SystemExit(
                f"fetch-json-schema-suite: the jsonschema {version} sdist has no "
                "json/tests/draft2020-12"
            )
        shutil.rmtree(dest, ignore_errors=True)
        unpacked.rename(dest)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
