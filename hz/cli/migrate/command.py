"""``hz migrate``: the command, and its report of each file."""

from __future__ import annotations

import os
from pathlib import Path

import click

from hz.cli.help import examples
from hz.cli.migrate import names, reading, writing
from hz.cli.migrate.folders import IN_PLACE, OUT
from hz.cli.migrate.reading import SUFFIX, YAML_SUFFIXES, Listed, Read
from hz.runtime.artifacts.errors import HzError


def _refused(shown: str, error: HzError) -> None:
    """The report's lines for a file an error kept from being migrated."""
    from hz.runtime.artifacts.printable import printable

    click.echo(f"{shown}: error: {printable(error.message)}")
    if error.hint:
        click.echo(f"  hint: {printable(error.hint)}")
    click.echo(f"{shown}: not migrated")


@click.command(
    epilog=examples(
        "hz migrate workflows/ --check",
        "hz migrate workflows/ --out contracts/",
    )
)
@click.argument("target", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write the migrated contracts under this folder (same relative paths), not in place.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 when a file would change (with --out: when a file there is "
    "not what hz migrate writes now).",
)
@click.option(
    "--namespace",
    type=click.Choice(["me", "team", "none"]),
    help="Heinzelmännchen's namespace of the contracts, carried into their names "
    "(NAMESPACE-NAME); default: a me/ or team/ folder in each file's path as given.",
)
@click.option(
    "--force",
    is_flag=True,
    help="With --out: overwrite a file there that differs from what hz migrate writes now "
    "(edited since an earlier migration).",
)
def migrate(target: Path, out: Path | None, check: bool, namespace: str | None, force: bool) -> int:
    """Convert Heinzelmännchen contracts (hz.schema: 1) in TARGET, a file or a folder, into hz
    contracts, key by key: the body, the comments and the key order stay as written.

    Every mapping and every key hz has no home for is reported with its code, line and what
    to decide (`hz explain HZ170`). A file that is already an hz contract is left as it is.
    With --out, a file there that differs from what hz migrate writes now is not overwritten
    without --force, and --check compares with the files there.
    Exit 1 when a file cannot be migrated, or with --check when one would change."""
    from hz.compiler.migrate import migrate as migrate_one
    from hz.runtime.artifacts.printable import printable

    # Each file is read, and in place written, by descriptor from the folder that was listed.
    base, listed = reading.files(target)
    files = reading.contracts(base, listed, IN_PLACE)
    given = "" if namespace == "none" else namespace
    read = [source for source in files if isinstance(source, Read)]
    results = [migrate_one(s.data, str(base / s.relative), given) for s in read]
    # With --out, the names of the hz contracts there are taken too (the file each migration
    # replaces aside); in place, those of a folder's hz contracts in YAML; a file migrated in
    # place on its own is checked against itself only.
    replaced = {source.relative for source in files}
    if out is not None:
        taken = names.names_in(out, replaced, OUT, (SUFFIX, *YAML_SUFFIXES))
    elif base == target:  # a folder migrated in place: its Markdown contracts are in results
        taken = names.names_in(base, replaced, IN_PLACE, YAML_SUFFIXES)
    else:
        taken = {}
    skip = {os.path.realpath(out / r) for r in replaced} if out is not None else set()
    clashes = names.collisions(results, taken, skip)
    migrations = {s.relative: (r, c) for s, r, c in zip(read, results, clashes, strict=True)}
    failed = changed = 0
    # One file's error (a link in the output folder, a file gone) is that file's: reported,
    # and the others are migrated still.
    for source in files:
        path = base / source.relative
        shown = printable(str(path))
        if isinstance(source, Listed):
            failed += 1
            _refused(shown, source.error or HzError(f"cannot read {shown}"))
            continue
        result, clash = migrations[source.relative]
        # Not migrated for a clash: only what keeps it from being, as for any other error.
        for note in clash or result.notes:
            where = f"{shown}:{note.line}:{note.column}"
            click.echo(f"{where}: {note.kind}: {printable(note.message)} [{note.code}]")
            if note.decide:
                click.echo(f"  decide: {printable(note.decide)}")
        if result.failed or clash:
            failed += 1
            click.echo(f"{shown}: not migrated")
            continue
        if result.text is None:
            click.echo(f"{shown}: an hz contract already, unchanged")
            continue
        decide = sum(1 for n in result.notes if n.kind == "decide")
        dest = (out / source.relative) if out is not None else path
        written = printable(str(dest))
        try:
            held = writing.held(out, source.relative) if out is not None else None
        except HzError as e:
            failed += 1
            _refused(shown, e)
            continue
        if held == result.text.encode("utf-8"):
            click.echo(f"{shown}: {written} is up to date ({decide} to decide)")
            continue
        changed += 1
        # Not the user's edits of an earlier migration (unless told), nor the source itself
        # when the output folder is the folder migrated.
        edited = held is not None and os.path.realpath(dest) != os.path.realpath(path)
        if check:
            try:  # what the run refuses, --check reports as the run does
                if out is None:
                    writing.refuse_hard_links(written, source.status)
            except HzError as e:
                failed += 1
                _refused(shown, e)
                continue
            where = f" to {written}" if out is not None else ""
            was = ", not there yet" if out is not None and held is None else ""
            was = ", which holds something else" if edited else was
            click.echo(f"{shown}: would be migrated{where}{was} ({decide} to decide)")
            continue
        if edited and not force:
            failed += 1
            _refused(
                shown,
                HzError(
                    f"{written} differs from what hz migrate writes now (edited since it was "
                    "migrated?): not overwritten",
                    hint="keep your edits (compare with a migration into another folder), or "
                    "migrate again with --force to overwrite it",
                ),
            )
            continue
        try:
            if out is not None:
                writing.write(out, source.relative, result.text, source.status, OUT)
            else:
                writing.write(base, source.relative, result.text, source.status, IN_PLACE)
        except HzError as e:
            failed += 1
            _refused(shown, e)
            continue
        click.echo(f"{shown}: migrated to {written} ({decide} to decide)")
    if not files:
        looked = "looked for *.md with an hz: frontmatter"
        click.echo(f"no contracts found in {printable(str(target))} ({looked})")
        return 1
    return 1 if failed or (check and changed) else 0
