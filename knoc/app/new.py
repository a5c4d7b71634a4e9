"""`knoc new agent|domain|extension`, `knoc init` and `knoc id`: sources
written from skeletons with fresh ULIDs, never over an existing file, then
validated like any other source."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from knoc.a2a import targets
from knoc.app.common import compile_cached, exists_message, only
from knoc.app.outcome import Outcome, UsageError
from knoc.config import CONFIG_FILE, Config, ConfigError, load_config, repos_around
from knoc.features import authoring as author
from knoc.features import schemas
from knoc.features.importing.imported import unpublishable
from knoc.features.migrate import BLUEPRINTS
from knoc.incremental.driver import spec_set
from knoc.io import files, writing
from knoc.kinds.domain import COLLECTION
from knoc.kinds.spec import BUILTIN_SPECS
from knoc.rules import slug as slugs
from knoc.rules import ulid
from knoc.rules.paths import has_userinfo, shown_url

EXTENSIONS = "extensions"
IGNORE = "# knoc's cache: safe to delete, never worth committing\n.knoc-cache/\n"
FIRST_AGENT, FIRST_DOMAIN = "hello-agent", "greetings"


def new_agent(config: Config, slug: str, title: str | None, url: str | None, *, use_cache: bool) -> Outcome:
    """content/agent-blueprints/SLUG.kno: a skeleton, private until its
    visibility line is removed; without `url`, on the host most of the
    repo's cards are on."""
    url = (url or f"https://{_usual_host(config, use_cache)}/{{slug}}").replace("{slug}", _slug(slug))
    _publishable(url)
    text = author.blueprint_skeleton(slug, title or author.title_of(slug), url,
                                     versions=targets.get(config.a2a).versions)
    return _write_and_check(config, {f"{config.content}/{BLUEPRINTS}/{slug}.kno": text}, use_cache)


def _usual_host(config: Config, use_cache: bool) -> str:
    """The host most of the repo's public cards are on, else the example
    one: a new agent goes beside the others, until it is given its own."""
    hosts = Counter(c.projection.host for c in compile_cached(config, use_cache).cards)
    return min(hosts, key=lambda h: (-hosts[h], h)) if hosts else "agents.example.com"


def new_domain(config: Config, slug: str, title: str | None, *, use_cache: bool) -> Outcome:
    text = author.domain_skeleton(_slug(slug), title or author.title_of(slug))
    return _write_and_check(config, {f"{config.content}/{COLLECTION}/{slug}.kno": text}, use_cache)


def new_extension(config: Config, slug: str, title: str | None, uri: str, *, use_cache: bool) -> Outcome:
    uri = uri.replace("{slug}", _slug(slug))
    _publishable(uri, "an extension's uri is where its page is published, e.g. https://example.com/ext/name/v1")
    text = author.extension_skeleton(slug, title or author.title_of(slug), uri)
    return _write_and_check(config, {f"{config.content}/{EXTENSIONS}/{slug}.kno": text}, use_cache)


def _apart(folder: Path) -> None:
    """Refuse a new repo inside the sources of another (its content/ or
    specs/), or around another in its own: one would read the other's
    files as its own; or inside another's output folder, which its builds
    replace."""
    for root in repos_around(folder.resolve().parent):  # each: a repo inside another's content reads as both
        try:
            outer = load_config(root)
        except ConfigError as exc:  # which folders it reads is not known: none is safe
            raise UsageError("KNO-CONFIG", f"{folder} is inside the content repo at {root}, whose knoc.toml does "
                             f"not read ({exc}), so its content folder is not known",
                             "fix that knoc.toml first, or start the new repo outside that repo") from None
        for kind, sources in (("content", outer.content), ("specs", outer.specs), ("output", outer.output)):
            if folder.resolve().is_relative_to((outer.root / sources).resolve()):
                raise UsageError("KNO-CONFIG", f"{folder} is inside the {kind} folder of the content repo at "
                                 f"{outer.root}, " + ("whose builds replace that folder whole" if kind == "output"
                                                      else "which would read the new repo's files as its own"),
                                 "start the new repo outside that folder (or outside that repo)")
    for kind in ("content", "specs"):
        inner = files.first_below(folder / kind, (CONFIG_FILE, "specs"), folder) if files.is_dir(folder / kind) \
            else None
        if inner is not None:  # what marks a repo's root (`is_repo_root`)
            raise UsageError("KNO-CONFIG", f"{inner} marks another content repo, inside the {kind} folder the new "
                             "repo would read: it would read that repo's files as its own",
                             "start the new repo elsewhere, or move that repo out of this folder")


def _publishable(url: str, hint: str | None = None) -> None:
    """Refuse a url a card (or an extension's page) cannot be published at,
    before anything is written; a password in it is never repeated."""
    if has_userinfo(url):
        raise UsageError("KNO-CONFIG", f"`{shown_url(url)}` holds a user name or password, which would be published",
                         "give the url without them: a client brings its own credentials")
    if (why := unpublishable(url)) is not None:
        raise UsageError("KNO-CONFIG", f"`{url}` cannot be published at: {why}", hint)


def init(folder: Path, url: str | None = None) -> Outcome:
    """A new content repo in `folder` (made if missing): knoc.toml, a
    .gitignore for the cache, one perception domain and one public agent
    (at `url`) that perceives it, which build to a valid card at once. The
    specs are knoc's built-in set until `knoc specs vendor` copies them in."""
    if url is not None:
        _publishable(url)
    if files.dangling(folder) or (files.stat(folder) is not None and not files.is_dir(folder)):
        raise UsageError("KNO-CONFIG", f"{folder} is not a folder" + (" (a link to nothing)" if files.dangling(folder)
                                                                      else ""))
    _apart(folder)
    writing.writable(folder, ".gitignore")
    ignored = files.is_file(folder / ".gitignore") and ".knoc-cache" in files.read_bytes(
        folder / ".gitignore").decode("utf-8", "replace")
    first = _first_slug(url)
    wanted = {
        CONFIG_FILE: author.config_file(),
        f"content/{COLLECTION}/{FIRST_DOMAIN}.kno": author.domain_skeleton(
            FIRST_DOMAIN, "Greetings", "Messages that greet someone, and the answers to them."),
        f"content/{BLUEPRINTS}/{first}.kno": author.blueprint_skeleton(
            first, author.title_of(first), url or f"https://agents.example.com/{FIRST_AGENT}", public=True,
            domain=FIRST_DOMAIN, description="Answers a greeting with a greeting.", skill="Greet",
            skill_description="Replies to a greeting in the same language."),
    }
    _refuse_existing(folder, wanted)
    for rel, text in wanted.items():  # each makes the folders it needs, never through a link
        writing.write_in(folder, rel, text.encode("utf-8"))
    if not ignored:
        writing.append_in(folder, ".gitignore", IGNORE)
    config = load_config(folder.resolve())
    editor, kept = _editor_files(config)
    # Without the cache: a new repo's two files gain nothing from it, and "nothing else written" holds.
    outcome = only(compile_cached(config, False), set(wanted) - {CONFIG_FILE}, "knoc init", "nothing else written")
    settings = [rel for rel in editor if rel.startswith(".vscode/")]
    outcome.notes = [f"wrote {folder / rel}" for rel in [*wanted, *([] if ignored else [".gitignore"]), *settings]]
    if len(settings) < len(editor):
        outcome.notes.append(f"wrote {folder / schemas.FOLDER}/ (each entity type's JSON Schema, for editors)")
    outcome.notes += [f"did not write {folder / rel}: a file or link is there (the editors guide says what it holds)"
                      for rel, why in kept if why is None]
    outcome.notes += [f"did not write into {folder}: {why}" for why in dict.fromkeys(w for _, w in kept if w)]
    outcome.notes += ["next:", *([] if folder == Path(".") else [f"  cd {folder}"]),
                      "  knoc build                # cards into build/",
                      "  knoc new agent my-agent   # a second agent (private until you publish it)",
                      "  knoc serve --watch        # see the catalog and cards on http://127.0.0.1:8000/"]
    return outcome


def _editor_files(config: Config) -> tuple[list[str], list[tuple[str, str | None]]]:
    """The editors' schemas (`knoc schemas`) and VS Code's settings for
    them, each written unless a file is there already: what was written,
    and what was left as it was (and why, when not because it is there)."""
    specs, _ = spec_set(config)
    wanted = {f"{schemas.FOLDER}/{name}": data for name, data in schemas.export(specs).items()}
    wanted |= schemas.vscode_files(specs, schemas.FOLDER, config.content)
    written: list[str] = []
    left: list[tuple[str, str | None]] = []
    for rel, data in wanted.items():
        try:  # never worth stopping a new repo for: left, and said
            writing.write_in(config.root, rel, data)
            written.append(rel)
        except files.Exists:
            left.append((rel, None))
        except writing.Unsafe as exc:  # a link on the way (`schemas` itself, say): said once
            left.append((rel, str(exc)))
    return written, left


def vendor_specs(config: Config, force: bool) -> Outcome:
    """Copy knoc's built-in specs into the repo's specs folder, to pin or extend them."""
    wanted = {f"{config.specs}/{rel.split('/', 1)[1]}": files.read_bytes(BUILTIN_SPECS.parent / rel).decode("utf-8")
              for rel in files.discover(BUILTIN_SPECS.parent, [BUILTIN_SPECS.name])}
    if not force:
        _refuse_existing(config.root, wanted, "pass --force to replace them with knoc's")
    for rel, text in wanted.items():
        writing.write_in(config.root, rel, text.encode("utf-8"), replace=force)
    # Without the cache: new specs salt it afresh, so it would be written whole, and nothing reused.
    outcome = only(compile_cached(config, False), set(wanted), "knoc specs vendor", "nothing else written")
    outcome.notes = [f"wrote {rel}" for rel in wanted]
    return outcome


def new_id() -> str:
    return ulid.new()


def _first_slug(url: str | None) -> str:
    """The first agent's slug: the last segment of its url's path when it
    is one (`https://host/triage` -> `triage`), else `hello-agent`."""
    last = urlsplit(url).path.rstrip("/").rpartition("/")[2] if url else ""
    return last if slugs.is_slug(last) and len(last) <= slugs.MAX_LENGTH else FIRST_AGENT


def _slug(slug: str) -> str:
    if not slugs.is_slug(slug):
        raise UsageError("KNO-CONFIG", f"`{slug}` is not a slug", f"use {slugs.WHAT}")
    if len(slug) > slugs.MAX_LENGTH:  # document-schema's bound: refused before the file is written
        raise UsageError("KNO-CONFIG", f"the slug is {len(slug)} characters long; a slug has at most "
                         f"{slugs.MAX_LENGTH}", "pick a shorter one")
    return slug


def _refuse_existing(root: Path, wanted: dict[str, str], hint: str = "move them away, or pick another folder") -> None:
    """Refuse before anything is written: a file that exists (exit 2,
    KNO-EXISTS), or a path that would be written through a link or where a
    file stands for a folder (files.Unsafe)."""
    for rel in wanted:
        writing.writable(root, rel)
    taken = [rel for rel in wanted if files.stat(root / rel) is not None or (root / rel).is_symlink()]
    if len(taken) == 1:
        raise UsageError("KNO-EXISTS", exists_message(taken[0]) + "; nothing was written", hint)
    if taken:
        shown = ", ".join(taken[:3]) + (f" and {len(taken) - 3} more" if len(taken) > 3 else "")
        raise UsageError("KNO-EXISTS", f"{shown} already exist; knoc does not replace them; nothing was written",
                         hint)


def _write_and_check(config: Config, wanted: dict[str, str], use_cache: bool) -> Outcome:
    _refuse_existing(config.root, wanted, "pick another name, or move the file away")
    for rel, text in wanted.items():
        writing.write_in(config.root, rel, text.encode("utf-8"))
    outcome = only(compile_cached(config, use_cache), set(wanted), "knoc validate", "nothing else written")
    outcome.notes = [f"wrote {rel}" for rel in wanted]
    return outcome
