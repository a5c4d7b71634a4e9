"""`knoc diff`: the public wire changes between two git refs, or a ref and
the work tree: compiled from the sources at each, with the signatures and
key sets of the build/ committed there (or on disk, for the work tree)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from knoc.app import evolution
from knoc.app.common import compile_cached
from knoc.app.outcome import Outcome, UsageError
from knoc.app.refs import check_refs, default_base, git_error, refused_at
from knoc.app.signing import signed_by
from knoc.config import Config, ConfigError, load_config
from knoc.diagnostics import Diagnostic, Severity, diag
from knoc.diagnostics.accepted import split
from knoc.evolution import report
from knoc.evolution.params import params_change
from knoc.features import diff as changes
from knoc.features import diff_comment as comment
from knoc.incremental.driver import Result, compile_repo
from knoc.incremental.sources import entities
from knoc.io import git, tree
from knoc.kinds.entity import Entity
from knoc.output.hosting import AI_CATALOG_FILE, CARD_FILE, JWKS_FILE, SITE
from knoc.output.tree import CATALOG, DOMAINS
from knoc.rules import jsontext
from knoc.rules.json import JsonObject
from knoc.rules.masking import masked

MACHINE = ("sarif", "junit", "github")  # formats that carry the breaking changes as findings
WORK_TREE = "work tree"


def diff(config: Config, base: str | None, *, fmt: str, fail_on: str, use_cache: bool,
         head: str | None = None, merge: bool = False) -> Outcome:
    """`base` against `head` (a ref), or against the work tree when `head` is None;
    with `merge`, the merge base of the two against `head` (git's `base...head`).
    `fail_on`: "breaking" fails on a breaking change no major version
    announces, "warning" on any breaking change (each is a warning), in
    every format alike."""
    gate = fail_on == "breaking"
    check_refs(base, head)
    named = None  # how the base is named when it is the merge base
    if merge and base is not None and head is not None:
        try:
            base, named = git.merge_base(config.root, base, head), f"{base}...{head}"
        except git.GitError as exc:
            if "merge-base failed" in str(exc) and git.shallow(config.root):  # it may be beyond the clone's depth
                raise UsageError("KNO-GIT", f"no common commit of `{base}` and `{head}` in this shallow clone",
                                 "fetch their history (`git fetch --unshallow`; in GitHub Actions, "
                                 "actions/checkout with `fetch-depth: 0`)") from None
            if "merge-base failed" in str(exc):  # git says nothing when there is none
                raise UsageError("KNO-GIT", f"`{base}` and `{head}` share no history: `{base}...{head}` compares "
                                 "from where one branched off the other", f"compare them as `{base}..{head}`") from None
            unknown = next((ref for ref in (base, head) if not git.knows(config.root, ref)), f"{base}...{head}")
            raise git_error(exc, unknown) from None
    with _compiled(config, head, use_cache) as (new, new_config, head_label, new_refused):
        diags = new.report.sorted() if head is None else []
        if not new.ok and head is None:
            errors = new.report.errors  # counted, not quoted: the comment may be public, the findings name files
            why = (f"not compared: the {head_label} does not compile ({errors:,} error{'s' if errors != 1 else ''}, "
                   "listed in the job's log and by `knoc validate`): fix it first")
            return Outcome("knoc diff", diags, new.inputs, why,
                           answer=_not_compared(fmt, config, None, head_label, why), report_format=_report_format(fmt))
        if not new.ok:  # its findings point into files the work tree may not hold (but what the ref holds refused)
            own = _configured(new_config, head_label, config.root)
            return _refused(fmt, config, new_refused, new.inputs, _named(config, base), head_label, head_label,
                            (own, own))
        with _compiled(config, base or default_base(config), False, named) as (old, old_config, label, old_refused):
            if not old.ok:
                return _refused(fmt, config, diags + old_refused, new.inputs, label, head_label, label,
                                (_configured(old_config, label, config.root),
                                 _configured(new_config, head_label, config.root)))
            was = publication(old, old_config, config.a2a, _configured(old_config, label, config.root))
            now = publication(new, new_config, config.a2a, _configured(new_config, head_label, config.root))
            (old_extensions, old_domains), (extensions, new_domains) = _declared(old_config), _declared(new_config)
            domains = {**old_domains, **new_domains}  # one removed: where it was
            found = changes.ordered(changes.compare(was, now)
                                    + _params_changes(old_extensions, extensions, was, now))
            spec_changes = [c for c in evolution.compared(old_config, new_config) if c.cls != "none"]
    counts = changes.count(found)
    specs = [evolution.as_dict(c) for c in spec_changes]
    spec_diags = [d for c in spec_changes for d in report.diagnostics(c, label)]
    answer = None
    if fmt in ("text", "markdown"):  # a pull request's comment: no url's password (they are the cards' values)
        answer = masked(comment.markdown(found, label, head_label, config.a2a, specs))
    elif fmt == "json":
        answer = json.dumps(_masked({"base": label, "head": head_label, "a2a_target": config.a2a, "compared": True,
                                     "counts": counts, "changes": [c.to_dict() for c in found], "specs": specs}),
                            indent=2, ensure_ascii=False) + "\n"
    sources = {**{f"agent {slug}": rel for slug, rel in old.agents.items()},  # one removed: where it was
               **{f"extension {uri}": e.source.rel for uri, (e, _) in extensions.items()},
               **{f"domain {slug}": rel for slug, rel in domains.items()},
               **{f"agent {slug}": rel for slug, rel in new.agents.items()}}
    findings = [diag("KNO-CARD-BREAKING", f"{c.subject} `{c.name}`: {c.message}"
                     + (f" (intended: {c.intended})" if c.intended else ""),
                     file=sources.get(f"{c.subject} {c.name}"),
                     hint=_ANNOUNCED if c.intended else _HINTS.get(c.subject, _HINTS[""]))
                for c in found if c.cls == "breaking"]
    if gate:  # --fail-on breaking: a breaking change no major version announces is an error
        findings = [dataclasses.replace(d, severity=Severity.ERROR) if "(intended: " not in d.message else d
                    for d in findings]
    summary = (f"{counts['breaking']} breaking" + (f" (and {counts['intended']} intended)" if counts["intended"]
                                                    else "")
               + f", {counts['additive']} additive, {counts['cosmetic']} cosmetic since {label}")
    if spec_changes:
        classes = ["breaking (announced)" if c.new and c.cls == "breaking" and c.bump == "major"
                   else evolution.class_name(c) for c in spec_changes]
        summary += "; specs: " + ", ".join(f"{classes.count(k)} {k}" for k in dict.fromkeys(sorted(classes)))
    unannounced = any(d.is_error for d in spec_diags)  # a spec change its version does not announce
    unaccepted, accepted = split(findings + spec_diags, config.accept)
    machine = fmt in MACHINE  # the findings go to the reporter, which counts the accepted; else they are counted here
    return Outcome("knoc diff", diags + findings + spec_diags if machine else diags, new.inputs, summary,
                   answer=answer, report_format=_report_format(fmt), accepted=[] if machine else accepted,
                   # --fail-on warning: a breaking change (a warning each) fails it, unless knoc.toml accepts it
                   failed=counts["breaking"] > 0 or unannounced if gate else fail_on == "warning" and bool(unaccepted))


# What to do about a breaking change, by what it is a change of.
_HINTS = {"agent": "keep it, or bump the major of the card's version (a blueprint's `a2a_projection.version`, an "
                   "agent card's `version`) and tell its clients",
          "extension": "keep accepting those params, or publish the change under a new URI (a versioned extension)",
          "": "keep it, or tell its clients: only an agent's major version announces a breaking change"}
_ANNOUNCED = "its major version announces it: tell its clients what they must change"


def _masked(value: object) -> object:
    """A JSON value with every url's password in its strings masked."""
    if isinstance(value, str):
        return masked(value)
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


class _Side(NamedTuple):
    """One side of the comparison."""

    result: Result
    config: Config  # where its build/ is
    label: str  # how to name it
    refused: list[Diagnostic]  # what a ref holds and no checkout here can (`refused_at`): the findings
    # that name its own files; the rest point into files the work tree may not hold.


@contextlib.contextmanager
def _compiled(config: Config, ref: str | None, use_cache: bool, named: str | None = None) -> Iterator[_Side]:
    """The repo compiled at `ref` (None: the work tree, through the cache);
    `named`: the range whose merge base `ref` is."""
    if ref is None:
        yield _Side(compile_cached(config, use_cache), config, WORK_TREE, [])
        return
    with contextlib.ExitStack() as stack:  # only the git side's failures are KNO-GIT, not the caller's
        try:
            label = git.describe(config.root, ref)
            label = label if named is None else f"{named} ({label})"  # the range, and its merge base's sha
            exported = stack.enter_context(git.checkout(config.root, ref))
        except (git.GitError, ValueError) as exc:
            raise git_error(exc, ref) from None
        try:
            at_ref = load_config(exported.root, config.a2a, config.root)
        except ConfigError as exc:
            raise UsageError("KNO-CONFIG", f"at {label}: {exc}", "compare with a ref whose knoc.toml knoc reads, "
                             "or fix it there") from None
        result = compile_repo(at_ref)
        refused = refused_at(exported, at_ref.specs, label) + refused_at(exported, at_ref.content, label)
        result.report.extend(refused)
        yield _Side(result, at_ref, label, refused)


def _report_format(fmt: str) -> str | None:
    """How findings are reported when the answer owns stdout (Markdown, JSON)."""
    return "text" if fmt in ("markdown", "json") else None


def _not_compared(fmt: str, config: Config, base: str | None, head: str, why: str) -> str | None:
    """The answer when one side does not compile: still an answer in the
    format asked for (a JSON document a script can read, a comment a pull
    request shows), saying why there is no comparison."""
    if fmt == "json":
        return json.dumps({"base": base, "head": head, "a2a_target": config.a2a, "compared": False,
                           "error": why}, indent=2, ensure_ascii=False) + "\n"
    if fmt in ("text", "markdown"):
        return f"### knoc: A2A card changes\n\nNot compared: {why.removeprefix('not compared: ')}.\n"
    return None


def _named(config: Config, base: str | None) -> str | None:
    """How the base would be named, without compiling it (None: git cannot say)."""
    try:
        return git.describe(config.root, base or git.default_base(config.root))
    except (git.GitError, ValueError):
        return None


def _not_compiled(label: str, target: str, own: tuple[str, str] | None = None) -> tuple[str, str]:
    """Why nothing was compared, and what to do: as the summary and the
    finding say it. `own`: the targets the base's and the head's knoc.toml
    name, when the base did not compile for `target` (the one compared under)."""
    if own is not None and own[0] != own[1]:
        return (f"the sources at {label} do not compile for A2A {target}, the target both sides are compared "
                f"under; they were written for {own[0]} (the change of target is itself breaking)",
                f"compare under the old target: `knoc diff --a2a {own[0]}` (it reports the change of target too)")
    if own is not None and target != own[0]:
        return (f"the sources at {label} do not compile for A2A {target}, the target given with --a2a",
                f"compare under the target knoc.toml names: leave out --a2a (or give `--a2a {own[0]}`)")
    commit = label.rsplit("(", 1)[-1].rstrip(")")  # "HEAD (dacffff)": the commit the command can name
    return f"the sources at {label} do not compile", f"`git switch --detach {commit}`, then `knoc check`, says why"


def _refused(fmt: str, config: Config, diags: list[Diagnostic], inputs: list[str], base: str | None, head: str,
             at: str, own: tuple[str, str] | None = None) -> Outcome:
    """The outcome when the sources at `at` do not compile: a failure in
    every format (a finding SARIF, JUnit and GitHub carry; an answer in JSON
    or Markdown). `own`: the targets the base's and the head's knoc.toml name."""
    message, hint = _not_compiled(at, config.a2a, own)
    why = f"not compared: {message} ({hint})"
    finding = diag("KNO-DIFF-NOT-COMPARED", f"nothing was compared: {message}", hint=hint)
    return Outcome("knoc diff", [*diags, finding], inputs, f"not compared: {message}",
                   answer=_not_compared(fmt, config, base, head, why), report_format=_report_format(fmt))


def _configured(config: Config, label: str, home: Path) -> str:
    """The A2A target the repo's knoc.toml names (both sides are compiled for
    the one the command runs with, so their cards compare field by field):
    a target knoc does not know is an error, as the build there would say."""
    try:
        return load_config(config.root, home=home).a2a
    except ConfigError as exc:
        raise UsageError("KNO-CONFIG", f"at {label}: {exc}", "fix knoc.toml's `a2a` there") from None


def publication(result: Result, config: Config, target: str, configured: str | None) -> changes.Publication:
    """What a build publishes: the cards and domains compiled, and the
    signatures and key sets its build/ holds (none when it is not signed)."""
    cards = {c.slug: json.loads(c.projection.body) for c in result.cards}
    hosts = sorted({c.projection.host for c in result.cards})
    signed: dict[str, tuple[str, ...]] = {}
    keys: dict[str, tuple[str, ...]] = {}
    if signed_by(config) is not None:
        for c in result.cards:
            signed[c.slug] = _kids(_built(config.out_dir, f"{SITE}{c.projection.site_dir}/{CARD_FILE}"),
                                   "signatures")
        for host in hosts:
            keys[host] = _kids(_built(config.out_dir, f"{SITE}{host}/{JWKS_FILE}"), "keys")
    ids = {a["slug"]: a["id"] for a in json.loads(result.files[CATALOG])["agents"]}
    catalogs = {}  # each host's AI Catalog but its entries, which follow the cards
    for host in hosts:
        listing = json.loads(result.files[f"{SITE}{host}/{AI_CATALOG_FILE}"])
        catalogs[host] = {k: v for k, v in listing.items() if k != "entries"}
    return changes.Publication(cards, json.loads(result.files[DOMAINS])["domains"], target, signed, keys,
                               sources=dict(result.agents), configured=configured, ids=ids, roots=dict(result.roots),
                               catalogs=catalogs)


def _declared(config: Config) -> tuple[dict[str, tuple[Entity, JsonObject]], dict[str, str]]:
    """In one read of the sources (both sides compile: each is valid): each
    public extension and its params schema, by URI; and each perception
    domain's source, by slug, where a change to it is said (and `[accept]`
    can name it)."""
    extensions: dict[str, tuple[Entity, JsonObject]] = {}
    domains: dict[str, str] = {}
    for ent in entities(config, declaring=("extension", "perception-domain")):
        if str(ent.data.get("$schema")).startswith("perception-domain@"):
            if isinstance(slug := ent.data.get("slug"), str):
                domains[slug] = ent.source.rel
            continue
        uri, schema = ent.data.get("uri"), ent.data.get("params_schema")
        if ent.data.get("visibility") != "private" and isinstance(uri, str) and isinstance(schema, dict):
            extensions.setdefault(uri, (ent, schema))
    return extensions, domains


def _params_changes(old: dict[str, tuple[Entity, JsonObject]], new: dict[str, tuple[Entity, JsonObject]],
                    was: changes.Publication, now: changes.Publication) -> list[changes.Change]:
    """Each extension whose params schema, under the same URI, may refuse
    params the old one accepted (its cards' params are the first tried),
    or accepts more than it did."""
    found = []
    stated: dict[str, list[object]] = {}  # each extension's params, as the cards on either side state them
    for card in (c for pub in (was, now) for c in pub.cards.values()):
        for uri, entry in changes.extension_entries(card).items():
            if "params" in entry:
                stated.setdefault(uri, []).append(entry["params"])
    for uri in sorted(old.keys() & new.keys()):
        if (f := params_change(old[uri], new[uri], stated.get(uri, []))) is None:
            continue
        if f.cls == "additive":
            found.append(changes.Change("extension", uri, "params-widened", "additive", "its params schema "
                                        f"now also accepts params the old one refused ({f.why}); nothing it "
                                        "accepted is refused"))
        elif f.cls == "breaking":
            found.append(changes.Change("extension", uri, "params-narrowed", "breaking", "under the same URI, "
                                        f"its params schema refuses params the old one accepted: {f.why} (`after` "
                                        "shows such params); a breaking change needs a new URI", None,
                                        changes.shown(f.witness)))
        else:
            why = f.why.replace("this spec's root", "the params' root")
            found.append(changes.Change("extension", uri, "params-changed", "breaking", "its params schema "
                                        "changed under the same URI, and knoc cannot tell whether it refuses "
                                        f"params the old one accepted ({why})"))
    return found



def _built(out: Path, rel: str) -> object:
    try:
        return jsontext.parse(tree.read(out, rel))
    except (OSError, jsontext.Refused):
        return None


def _thumbprint(jwk: dict[str, object]) -> str:
    from knoc.a2a import signing

    try:
        return signing.thumbprint(jwk)[:12]
    except (KeyError, TypeError, ValueError):
        return "not a key"


def _kids(doc: object, member: str) -> tuple[str, ...]:
    """The key ids of a card's signatures (their protected headers), or of a key set's keys."""
    from knoc.a2a import signing

    entries = doc.get(member) if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        return ()
    if member == "keys":  # a key by its id and its thumbprint: another key under the same kid is another key
        return tuple(sorted({f"{k['kid']} ({_thumbprint(k)})" for k in entries
                             if isinstance(k, dict) and isinstance(k.get("kid"), str)}))
    headers = (signing.protected_header(e) for e in entries)
    return tuple(sorted({str(h["kid"]) for h in headers if h and isinstance(h.get("kid"), str)}))
