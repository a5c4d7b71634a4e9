"""Finding the content repo and reading knoc.toml."""

from __future__ import annotations

import dataclasses
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict, cast

from knoc.a2a import targets
from knoc.diagnostics import accepted
from knoc.io import files
from knoc.io.cache import DIR as CACHE_DIR
from knoc.rules import toml
from knoc.rules.paths import credential_in, origin, segment_problem, split_url, web_link
from knoc.rules.text import PRIVATE_JWK_MEMBERS, hidden_character, holds_key

if TYPE_CHECKING:
    from knoc.kinds.entity import Layout

CONFIG_FILE = "knoc.toml"
# [knoc]: each key with what it means (the knoc.toml reference is made from these).
KNOC_KEYS = {
    "specs": "the folder of spec entities, one per entity type (default `specs`); without the default folder "
             "knoc uses its built-in specs, and another name must be a folder that exists",
    "content": "the folder of agents, blueprints, perception domains and extensions (default `content`; "
               "another name must be a folder that exists)",
    "output": "the folder the build writes and `knoc check` compares (default `build`); inside the repo, apart "
              "from the sources, `.git` and `.knoc-cache`",
    "a2a": f"the A2A version the cards are written for: {', '.join(f'`{t}`' for t in targets.names())} "
           f"(default `{targets.DEFAULT}`); `--a2a` overrides it for one run",
    "catalog_url": "where `build/site/` (the all-hosts catalog) is published, an http(s) URL without a "
                   "credential (a user name, password, key or token); each host's catalog page links to it",
}
_TABLES = ("knoc", "host", "signing", "primary", "accept")


class Settings(TypedDict, total=False):
    """[knoc] as knoc.toml sets it (KNOC_KEYS): each a string."""

    specs: str
    content: str
    output: str
    a2a: str
    catalog_url: str


FOLDERS: tuple[Literal["specs", "content", "output"], ...] = ("specs", "content", "output")
# [host]: who operates the hosts, for each host's AI Catalog (its `host` object).
HOST_KEYS = {"display_name": "displayName", "identifier": "identifier",
             "documentation_url": "documentationUrl", "logo_url": "logoUrl"}
_HOST_KEY = {v: k for k, v in HOST_KEYS.items()}  # an AI Catalog key's knoc.toml key
HOST_HELP = {
    "display_name": "the operator's name, as people read it",
    "identifier": "a stable identifier of the operator (a domain, or a URN)",
    "documentation_url": "where the operator documents its agents (an http(s) URL)",
    "logo_url": "the operator's logo (an http(s) or `data:image/` URL)",
}
# [signing]: the private key never lives in the repo; its public half does.
SIGNING_KEY_ENV = "KNOC_SIGNING_KEY"  # the private key's path, or the PEM itself, or it base64-encoded (knoc.io.keys)
SIGNING_KEYS = {
    "key": "the path of the private signing key, a file outside the repo (`~` expanded, a relative path from "
           "the repo's folder; never the key itself: knoc.toml is committed); beside --sign-key and "
           "KNOC_SIGNING_KEY",
    "public": "the public keys that sign this repo's cards: a PEM or JWK file in the repo, or an inline JWK "
              "table, or a list of these; `knoc check` verifies signatures against them, and a build with "
              "another key is refused; a JWK's own `kid` names its key",
    "kid": "the key id to write (one signing key only, whatever `kid` its JWK holds; default the JWK's own "
           "`kid`, else its RFC 7638 thumbprint)",
    "retired": "public keys no longer signing but still published in jwks.json (files in the repo or inline "
               "JWK tables), so cards signed with them keep verifying",
}
_SETTINGS = {"knoc": KNOC_KEYS, "host": HOST_KEYS, "signing": SIGNING_KEYS}  # the tables of fixed keys
# A public key as knoc.toml gives it: a repo-relative file, or an inline JWK (its members, sorted).
KeyRef = str | tuple[tuple[str, str], ...]


class ConfigError(Exception):
    """A usage or configuration problem: exit code 2. `at`: where in
    knoc.toml it is (line, column), when that is known; `key`: the
    (table, key) it is about, which `load_config` finds `at` from."""

    def __init__(self, message: str, at: toml.Place | None = None, key: tuple[str, str | None] | None = None) -> None:
        super().__init__(message)
        self.at, self.key = at, key


@dataclass(frozen=True)
class Config:
    root: Path
    specs: str = "specs"
    content: str = "content"
    output: str = "build"
    a2a: str = targets.DEFAULT
    host: tuple[tuple[str, str], ...] = ()  # [host] as (AI Catalog key, value), in HOST_KEYS order
    jobs: int = 0  # processes for the per-file stage (--jobs); 0: every core
    kid: str | None = None  # [signing]
    key: str | None = None  # [signing]: the private key's path, outside the repo
    public: tuple[KeyRef, ...] = ()  # [signing]
    retired: tuple[KeyRef, ...] = ()  # [signing]
    primary: tuple[tuple[str, str], ...] = ()  # [primary]: (host folder, agent slug), sorted
    primary_at: tuple[tuple[str, int, int], ...] = ()  # where knoc.toml sets each: (host folder, line, column)
    accept_at: tuple[tuple[str, int, int], ...] = ()  # where [accept] sets each code: (code, line, column)
    catalog_url: str = ""  # where site/ (the all-hosts catalog) is published, linked from each host's page
    accept: accepted.Accept = ()  # [accept]: warnings kept, by code, with the files they are kept in

    @property
    def report_prefix(self) -> str:
        """How a forge (SARIF, annotations, JUnit) names the repo's files: from its git work tree's top."""
        from knoc.io import git

        return git.top_prefix(self.root)

    @property
    def layout(self) -> Layout:
        from knoc.kinds.entity import Layout  # the entity kinds, only once a repo is compiled

        return Layout(posixpath.normpath(self.specs), posixpath.normpath(self.content))

    @property
    def out_dir(self) -> Path:
        """The output folder with every `..` and symlink resolved (load_config has checked it lies
        inside the repo, apart from the sources)."""
        return (self.root / self.output).resolve()


def find_root(start: Path) -> Path:
    here = start.resolve()
    for folder in (here, *here.parents):
        if files.is_file(folder / CONFIG_FILE) or files.is_dir(folder / "specs"):
            return folder
        _a_file_if_any(folder / CONFIG_FILE)
    raise ConfigError(f"no content repo here: no {CONFIG_FILE} or specs/ in {here} or above it "
                      "(run knoc inside a content repo, or pass --root)")


def repos_around(folder: Path) -> list[Path]:
    """Every folder from `folder` up that a run could take for a content repo's root (a knoc.toml
    there, of whatever kind, or a specs/ folder), innermost first; none raises, whatever it holds."""
    here = folder.resolve()
    return [f for f in (here, *here.parents) if is_repo_root(f)]


def is_repo_root(folder: Path) -> bool:
    """Whether a run could take `folder` for a content repo's root: a knoc.toml there, of whatever kind, or specs/."""
    return files.is_dir(folder / "specs") or files.present(folder / CONFIG_FILE)


def _a_file_if_any(path: Path) -> None:
    """Refuse a knoc.toml that is there but no file (a folder, a pipe, a
    device, a link to nothing): its settings would be lost without a word."""
    if files.present(path) and not files.is_file(path):
        raise ConfigError(f"{path} is not a regular file: knoc reads its settings from one "
                          "(replace it with a file, or remove it)")


def load_config(root: Path, a2a: str | None = None, home: Path | None = None) -> Config:
    """The repo's settings: knoc.toml's, `a2a` (the command line's) over its own. A problem with
    knoc.toml is a ConfigError placed at its key. `home`: the work tree `root` is a checkout
    of (`knoc diff`'s ref), whose absolute folder settings name folders of `root` too."""
    path = root / CONFIG_FILE
    text = None
    _a_file_if_any(path)
    if files.is_file(path):
        try:
            data = files.read_source(str(path), str(root))
            text = data.decode("utf-8").removeprefix("\ufeff")  # an editor's BOM
            raw = toml.parse(text)
        except toml.Unreadable as exc:
            raise ConfigError(f"{CONFIG_FILE}: {exc}", exc.at) from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{CONFIG_FILE} is not UTF-8 text (byte 0x{data[exc.start]:02x}); save it as UTF-8",
                              toml.byte_place(data, exc.start)) from None
        except OSError as exc:
            raise ConfigError(f"{CONFIG_FILE}: {exc}") from None
    try:
        config = _config(root, raw if text is not None else None, a2a, home or root)
    except ConfigError as exc:
        if text is not None and exc.at is None and exc.key is not None:
            exc.at = toml.key_place(text, *exc.key)
        raise
    if text is None:
        return config
    places = ((_host_folder(host), toml.key_place(text, "primary", host)) for host in _table(raw, "primary"))
    codes = ((code, toml.key_place(text, "accept", code)) for code, _ in config.accept)
    return dataclasses.replace(config, primary_at=tuple(sorted((f, *at) for f, at in places if f and at)),
                               accept_at=tuple((code, *at) for code, at in codes if at))


def _config(root: Path, raw: dict[str, object] | None, a2a: str | None, home: Path) -> Config:
    values: Settings = {}  # [knoc] strings, checked below
    if raw is not None:
        section, host, signing, primary, accept = (_table(raw, name) for name in _TABLES)
        unknown = [*(("", k) for k in sorted(set(raw) - set(_TABLES))),
                   *(("knoc", k) for k in sorted(set(section) - KNOC_KEYS.keys())),
                   *(("host", k) for k in sorted(set(host) - set(HOST_KEYS))),
                   *(("signing", k) for k in sorted(set(signing) - set(SIGNING_KEYS)))]
        if unknown:
            named = ", ".join((f"{toml.shown_key(k)} under [{t}]" if t else f"{toml.shown_key(k)} (a table, or a key "
                               f"above the first)") + toml.near(k, _SETTINGS.get(t, _TABLES)) for t, k in unknown)
            raise ConfigError(f"{CONFIG_FILE}: unknown setting(s): {named}; a key belongs to the table whose "
                              f"header is the last above it. [knoc] takes {', '.join(sorted(KNOC_KEYS))}; [host] takes "
                              f"{', '.join(HOST_KEYS)}; [signing] takes {', '.join(SIGNING_KEYS)}; [primary] maps a "
                              "host to an agent's slug; [accept] maps codes to file patterns", key=unknown[0])
        kid, key = (_signing_text(signing, name) for name in ("kid", "key"))
        if key and not key.startswith("~") and not posixpath.isabs(key):  # relative to the repo, not to where knoc runs
            key = str(root / key)
        for table, settings in (("knoc", section), ("host", host)):
            for key_name, value in settings.items():
                if not isinstance(value, str):
                    raise ConfigError(f"{CONFIG_FILE}: `{key_name}` must be a string", key=(table, key_name))
        values.update(cast(Settings, section))  # its keys are KNOC_KEYS and its values strings: checked above
        top = Path(os.path.abspath(root)).as_posix()
        for folder in FOLDERS:  # `build/` and `x/../build` are `build` in every message
            if folder in values:
                if values[folder].startswith("~"):
                    raise ConfigError(f"{CONFIG_FILE}: `{folder}` names `{values[folder]}`: knoc reads it as a "
                                      "folder of that name in the repo, not your home folder; name the folder plainly",
                                      key=("knoc", folder))
                if values[folder][:1] != "/":
                    values[folder] = posixpath.relpath(posixpath.normpath(posixpath.join(top, values[folder])), top)
                # Absolute: in a checkout of `home` (diff's ref), as written; a link in home's tree is not the ref's.
                elif files.within(real := (posixpath.normpath if home != root else os.path.realpath)(values[folder]),
                                  real_top := (os.path.abspath if home != root else os.path.realpath)(home)):
                    values[folder] = posixpath.relpath(real, real_top)  # else outside the repo: said as written
        operator = tuple((HOST_KEYS[k], str(host[k])) for k in HOST_KEYS if k in host)
        for name, value in operator:  # each host's AI Catalog publishes them
            if (found := hidden_character(value)) is not None:
                raise ConfigError(f"{CONFIG_FILE}: [host] `{name}` holds {found}, which hides or reorders the "
                                  "text around it where it is shown; remove it", key=("host", _HOST_KEY[name]))
        if host.get("identifier") and (why := credential_in(str(host["identifier"]))):
            raise ConfigError(f"{CONFIG_FILE}: [host] `identifier` {why}, and it is published",
                              key=("host", "identifier"))
        for link in ("documentation_url", "logo_url"):
            if host.get(link):
                _published_link("host", link, str(host[link]))
        public, retired = _key_refs(signing, "public"), _key_refs(signing, "retired")
        primaries = _primaries(primary)
        if (refused := accepted.refused(accept)) is not None:
            raise ConfigError(f"{CONFIG_FILE}: [accept] {refused[1]}", key=("accept", refused[0]))
    else:
        operator, kid, key, public, retired, primaries, accept = (), None, None, (), (), (), {}
    if a2a is not None:
        values["a2a"] = a2a
    config = Config(root=root, host=operator, kid=kid, key=key, public=public, retired=retired, primary=primaries,
                    accept=accepted.parse(accept), **values)
    if config.catalog_url:
        _published_link("knoc", "catalog_url", config.catalog_url)
    if config.a2a not in targets.names():
        raise ConfigError(f"unknown A2A target `{config.a2a}`; choose one of {', '.join(targets.names())}",
                          key=("knoc", "a2a") if a2a is None else None)
    _check_layout(config)
    return config


def _published_link(table: str, key: str, url: str) -> None:
    """A url knoc.toml gives that is published (on the catalog pages, in each
    AI Catalog's host): an http(s) URL (a logo may be a `data:image/` one),
    without a credential in it."""
    if not web_link(url, image=key == "logo_url"):
        raise ConfigError(f"{CONFIG_FILE}: `{key}` must be an http(s) URL"
                          + (" (or a data:image/ one)" if key == "logo_url" else "") + ": it is published",
                          key=(table, key))
    if (why := credential_in(url)) is not None:
        raise ConfigError(f"{CONFIG_FILE}: `{key}` {why}, and it is published", key=(table, key))


def _table(raw: dict[str, object], name: str) -> dict[str, object]:
    """A table of knoc.toml (empty when it is not there)."""
    table = raw.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{CONFIG_FILE}: `{name}` must be a table (`[{name}]`)", key=("", name))
    return table


def _signing_text(signing: dict[str, object], name: str) -> str | None:
    """[signing] `kid` or `key` (None: not set). `key` names a file: never
    the key itself, which knoc.toml, committed, would publish."""
    value = signing.get(name, "")
    if not isinstance(value, str):
        raise ConfigError(f"{CONFIG_FILE}: [signing] `{name}` must be a string", key=("signing", name))
    if holds_key(value):  # `kid` is published in every key set, `key` names the private key's file
        raise ConfigError(f"{CONFIG_FILE}: [signing] `{name}` holds a key itself (its value is not shown): "
                          "knoc.toml is committed, and a key committed once is public for good; "
                          + ("give the path of a file outside the repo" if name == "key" else "give a short key id")
                          + ", and move the key out of the repo's history", key=("signing", name))
    return value or None


def _primaries(table: dict[str, object]) -> tuple[tuple[str, str], ...]:
    """[primary]: host = "agent slug", the agent whose card a host serves at its root."""
    found: dict[str, str] = {}
    for host, slug in table.items():
        if isinstance(slug, dict):  # `agents.example.org = "a"`: TOML reads a dotted key as tables
            raise ConfigError(f"{CONFIG_FILE}: [primary] reads `{host}` as a table: quote a host name that holds "
                              "dots (`\"agents.example.com\" = \"agent-slug\"`)", key=("primary", host))
        if (table_of := next((t for t, keys in _SETTINGS.items() if host in keys), None)) is not None:
            raise ConfigError(f"{CONFIG_FILE}: `{host}` is under [primary], but it is a [{table_of}] setting: a key "
                              "belongs to the table whose header is the last above it, so move it up there",
                              key=("primary", host))
        folder = _host_folder(host)
        if folder is None or not isinstance(slug, str) or not slug:
            raise ConfigError(f"{CONFIG_FILE}: [primary] takes `\"host\" = \"agent-slug\"` lines (a host name, "
                              f"with its port if the cards' urls have one; no scheme or path); `{host}` is not one, "
                              "or its value is not a slug", key=("primary", host))
        if folder in found and found[folder] != slug:
            raise ConfigError(f"{CONFIG_FILE}: [primary] names two agents for the host {folder}",
                              key=("primary", host))
        found[folder] = slug
    return tuple(sorted(found.items()))


def _host_folder(host: str) -> str | None:
    """A [primary] key's host as the cards' folders have it; None: not a host."""
    parts = split_url(f"https://{host}/") if _HOST.match(host) else None
    return origin(parts) if parts is not None else None


_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[^\s/:?#@\[\]]+)(:[0-9]{1,5})?$")  # host[:port], nothing else


def _key_refs(signing: dict[str, object], name: str) -> tuple[KeyRef, ...]:
    """[signing] `public` or `retired`: a file path or an inline JWK table, or a list of them."""
    value = signing.get(name, [])
    items = value if isinstance(value, list) else [value]
    refs: list[KeyRef] = []
    for item in items:
        if isinstance(item, str) and item:
            if holds_key(item):  # a key, not its file: not repeated
                raise ConfigError(f"{CONFIG_FILE}: [signing] `{name}` holds a key itself, not a file path (its "
                                  "value is not shown); give the path of a file in the repo, or the public key "
                                  "as an inline JWK table", key=("signing", name))
            if posixpath.isabs(item) or item.startswith("~") or ".." in item.split("/"):
                raise ConfigError(f"{CONFIG_FILE}: [signing] `{name}` names `{item}`: a public key file must be "
                                  "a path inside the repo (relative, without `..`), or give the JWK inline",
                                  key=("signing", name))
            refs.append(item)
        elif isinstance(item, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in item.items()):
            if set(item) & set(PRIVATE_JWK_MEMBERS):  # its private half, in a committed file
                raise ConfigError(f"{CONFIG_FILE}: [signing] `{name}` holds a private key (a JWK member only a "
                                  "private key has); keep only its public half here, and move the key out of the "
                                  "repo's history", key=("signing", name))
            refs.append(tuple(sorted(item.items())))
        else:
            raise ConfigError(f"{CONFIG_FILE}: [signing] `{name}` takes file paths in the repo or inline JWK "
                              "tables ({ kty = \"OKP\", crv = \"Ed25519\", x = \"...\" }), or a list of them",
                              key=("signing", name))
    return tuple(refs)


FOLDER_BYTES = 2048  # a folder setting's whole path: with an output path's 1,024 below it, under PATH_MAX


def _check_layout(config: Config) -> None:
    """The folders, after every `..` and symlink is resolved, lie inside the
    repo and apart: the output folder, which a build replaces whole, can
    never be the repo, hold it, or overlap the sources, `.git` or knoc's cache."""
    root = config.root.resolve()
    for key in ("specs", "content", "output"):
        problem = next((p for s in getattr(config, key).split("/") if s not in ("", ".", "..")
                        if (p := segment_problem(s))), None)
        if problem is not None:
            raise ConfigError(f"{CONFIG_FILE}: `{key}` is not a usable folder name: {problem}", key=("knoc", key))
    try:
        folders = {key: (root / getattr(config, key)).resolve() for key in ("specs", "content", "output")}
    except (OSError, RuntimeError) as exc:  # a symlink loop, say
        raise ConfigError(f"{CONFIG_FILE}: a folder setting cannot be resolved: {exc}", key=("knoc", None)) from None
    for key, folder in folders.items():
        if root not in folder.parents:
            named = getattr(config, key)
            raise ConfigError(f"{CONFIG_FILE}: `{key}` must be a folder inside the repo "
                              f"(`{named}`{'' if named == str(folder) else f' is {folder}'})", key=("knoc", key))
        if len(os.fsencode(folder)) > FOLDER_BYTES:  # the files below it would pass the system's PATH_MAX
            raise ConfigError(f"{CONFIG_FILE}: `{key}` is a folder whose path is {len(os.fsencode(folder)):,} bytes; "
                              f"knoc takes at most {FOLDER_BYTES:,}, for the files below it", key=("knoc", key))
        blocker = next((f for f in [*reversed(folder.parents), folder] if root in f.parents and files.present(f)
                        and not files.is_dir(f)), None)
        if blocker is not None and blocker != folder:  # the folder itself: said below, for the sources
            raise ConfigError(f"{CONFIG_FILE}: `{key}` names `{getattr(config, key)}`, inside "
                              f"{blocker.relative_to(root).as_posix()}, which is a file, not a folder",
                              key=("knoc", key))
    for key in ("specs", "content"):  # a typo would read no source, and a build would unpublish every card
        named, folder = getattr(config, key), folders[key]
        if files.dangling(root / named):
            raise ConfigError(f"{CONFIG_FILE}: `{key}` names `{named}`, a link to nothing (replace it with the "
                              "folder, or link it to one)", key=("knoc", key))
        if files.present(folder) and not files.is_dir(folder):
            raise ConfigError(f"{CONFIG_FILE}: `{key}` names `{named}`, which is not a folder", key=("knoc", key))
        if not files.present(folder) and named != getattr(Config, key):
            raise ConfigError(f"{CONFIG_FILE}: `{key}` names `{named}`, which does not exist (fix the name, or "
                              "create the folder)", key=("knoc", key))
    out = folders["output"]
    for name, folder in (("specs", folders["specs"]), ("content", folders["content"]), (".git", root / ".git"),
                         (CACHE_DIR, root / CACHE_DIR)):
        if out == folder or out in folder.parents or folder in out.parents:
            raise ConfigError(f"{CONFIG_FILE}: `output` ({config.output}, which is {out}) overlaps `{name}` "
                              f"({folder}); a build replaces the output folder whole", key=("knoc", "output"))
