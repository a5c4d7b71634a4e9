"""The codes of the command line and of reading, checking and resolving
the sources."""

from __future__ import annotations

from knoc.diagnostics.registry import E, W, declare

# --- the command line and its surroundings (exit code 2) -----------------
declare("KNO-CONFIG", E, "`knoc.toml` or the command line is wrong, or no content repo was found", """
    knoc looks for the content repo by walking up from the working directory to the first folder
    holding knoc.toml or specs/, then reads the [knoc] table of knoc.toml. This code covers an
    unknown setting, a value of the wrong type, a folder that lies outside the repo, an unknown A2A
    target and options that make no sense together. Fix the named setting or option; `--root`
    points knoc at a repo explicitly.""")
declare("KNO-ACCEPT-UNMATCHED", W, "an [accept] pattern in knoc.toml matches no file of the repo", """
    `[accept]` accepts a warning in the files its patterns name. A pattern that names none (a
    typo, or a file renamed since) accepts nothing now, and would accept that warning, unseen, in
    a file added later under the name. Correct it, or remove it. `"*"` matches everywhere and is
    never said; nor is a pattern under the output folder.""")
declare("KNO-GIT", E, "`knoc diff`: git is missing, this is not a git work tree, or the ref is unknown", """
    `knoc diff` compiles the sources as they were at a git ref (each file read as committed into a
    scratch folder, never touching the work tree) and compares the cards. It needs git on the PATH,
    a content repo inside a git work tree and a ref git knows. Pass `--base` with a branch, tag or
    commit.""")
declare("KNO-OUTPUT", E, "the output folder holds files knoc did not write; knoc will not replace it", """
    A build writes what changed aside, then moves it into the output folder (or swaps a whole new
    tree in). knoc only writes into a folder that is absent or that its own manifest.json
    describes, so that a misconfigured `output` setting can never delete someone's files. Move the
    named files away, or point `output` in knoc.toml at another folder.""")
declare("KNO-WRITE", E, "knoc will not write there: through a link, or where a file stands for a folder", """
    Commands that write (init, new, import, migrate, specs vendor, build) write only inside the
    repo's own folders: never through a link (which could point anywhere, another repo's files
    included), never over a link, and never where a file stands where a folder belongs. Replace
    the link with a real folder or file, or move the file away; nothing was written.""")
declare("KNO-LOCKED", E, "another knoc command kept the repo busy too long; this one did nothing", """
    One knoc command at a time compiles a repo and writes its build/ and cache (a `knoc serve
    --watch` rebuild and the pre-commit hook's build, say): a second one waits for the first,
    saying so, for up to ten minutes. Past that it stops without writing anything. Let the other
    command finish, or stop it, and run this one again.""")
declare("KNO-MACHINE", E, "the system refused (disk full, permission denied, read-only, out of files)", """
    The operating system refused what knoc asked of it: the disk or quota is full, a file or folder
    may not be read or written, the file system is read-only, or too many files are open. This is
    the machine's state, not a problem in your sources or a bug in knoc; the message names the
    file, and a failed build leaves the previous output as it was. Fix the named cause and run the
    command again.""")
declare("KNO-CACHE-UNUSED", W, "knoc does not use `.knoc-cache/` in this repo", """
    The cache finds what each source compiled to by the sha256 of its bytes, so knoc uses only a
    cache folder of its own. One git tracks is anyone's: whoever commits there could make a
    build publish, and `knoc check` accept, what no source says. A `.knoc-cache` that is a link,
    a file or a FIFO is no folder of knoc's own, and knoc writes nowhere else. A cache folder
    knoc did not make on this machine is emptied of its files before anything in it is read;
    one it cannot empty (read-only, another user's) is not used either. Each way every file is
    compiled (slower, never wrong). Untrack a committed one (`git rm -r --cached .knoc-cache`;
    knoc's own `.gitignore` there keeps it out of later commits), or remove what stands in its
    place (a link: `knoc clean --cache-only`; a file of yours, which knoc leaves alone: move it).""")
declare("KNO-CACHE", E, "a file of the cache under `.knoc-cache/` no longer holds what it held; it was dropped", """
    The cache keeps the large files a run rendered (the index, the catalog page, the manifest) as
    they are, named by their sha256, and trusts one whose size and ctime did not change; a run
    after a small edit also reads unchanged cards from it. A file damaged without either changing
    (a clock set back, or the disk itself), or a card no longer there, is found when it is read, too
    late for this run: knoc drops what named it and stops. Run the command again (or delete
    `.knoc-cache/`, always safe).""")
declare("KNO-SERVE", E, "`knoc serve`: nothing built to serve, no such `--site` tree, or the port is taken", """
    `knoc serve` serves the build/site/ tree of the last build on 127.0.0.1. Run `knoc build` first
    (or use `--watch`, which builds before serving), name an existing host tree with `--site`, or
    pick another `--port` (0 picks a free one).""")
declare("KNO-EXISTS", E, "`knoc new`, `import` or `migrate`: the file it would write exists; it is left as it is", """
    Commands that write sources never replace an existing file unless told to: the check and the
    create are one step, so a file cannot be lost to a race either. Pick another name, move the
    file away, or pass `--force` where the command has it.""")
declare("KNO-MIGRATE", E, "`knoc migrate`: a named file is not a legacy agent", """
    `knoc migrate` rewrites legacy agents (agent-card@0.x, or service-config@0.3.0 with subtype
    agent-card) as the newest agent-blueprint. Name only such files, or run it without arguments to
    migrate every file under content/agents/.""")
declare("KNO-MIGRATE-CHANGED", E,
         "`knoc migrate` would change a built file; it wrote nothing (a knoc bug: report it)", """
    Before writing, migrate compiles the repo as it is and as migrated in a scratch copy, for the
    A2A target it runs with, and refuses unless every built file but the manifest comes out byte
    for byte the same. A difference
    is a knoc bug: nothing was written; please report it with the legacy file.""")
declare("KNO-IMPORT-READ", E, "`knoc import`: the file or URL cannot be read, or is not JSON", """
    `knoc import` reads an A2A Agent Card from a file or URL (a URL without .json gets
    /.well-known/agent-card.json appended). The input could not be read, is not UTF-8, or is not
    JSON; the position of a JSON syntax error is given.""")
declare("KNO-VERIFY-READ", E, "`knoc verify`: the card or the key set cannot be read, or is not JSON", """
    `knoc verify` reads the card from a file or URL (a URL without .json gets
    /.well-known/agent-card.json appended) and the key set from --jwks or the signatures' `jku`.
    One of them could not be read (a missing file, an HTTP error such as 404, a download past
    the limits), is not JSON, or is not what it should be (a card that is not a JSON object, a
    key set without usable keys). The message names which and why.""")
declare("KNO-IMPORT-NOT-CARD", E,
         "`knoc import`: the JSON is not an A2A Agent Card (no name, service url or skill); nothing written", """
    An Agent Card is a JSON object with a name, a service url and at least one skill. JSON without
    them (a discovery document, an MCP manifest, a list) is refused and nothing is written for it.""")
declare("KNO-IMPORT-SIGNATURE", W, "`knoc import`: the original card was signed (and whether that verified)", """
    A signature covers the original card's bytes, so the blueprint never carries it: sign the
    built card with `knoc build --sign-key`. With `--allow-jku` import fetches the key sets the
    signatures name and says whether one verified; review who published the original either way.""")
declare("KNO-IMPORT-CHANGED", W, "`knoc import` dropped or converted a field (the JSON path says which)", """
    Cards in the wild mix versions and shapes. import keeps what A2A defines and converts what it
    can do unambiguously (a string where a list belongs, a boolean written as a string, a 1.0
    interface); everything dropped or converted is one warning with its JSON path. Review the
    written blueprint.""")
declare("KNO-INTERNAL", E, "knoc hit a bug (exit 3): please report it with the named file", """
    knoc failed on its own, not because of your sources: an exception no rule anticipated. The
    diagnostic names the file being processed; the run exits with code 3 and writes nothing.
    Please report it with that file and the output of the same command with `--debug`, which
    adds the traceback.""")
# --- reading sources ----------------------------------------------------------
declare("KNO-IO-READ", E, "a file could not be read", """
    A source file listed under specs/ or content/ could not be opened or read (permissions, a file
    removed during the build). The operating system's reason is given.""")
declare("KNO-IO-REFUSED", E, "a file knoc will not read: not a regular file, a link out of the repo, or too large", """
    knoc reads only regular files inside the repo, each at most 1 MiB: a FIFO would block the
    build forever, a link to /dev/zero never ends, and a link out of the repo would publish what
    lies outside it. Remove the file or the link, or split a file that is too large.""")
declare("KNO-YAML-ENCODING", E, "the file is not UTF-8 (points at the first bad byte)", """
    .kno files are UTF-8 text. The position of the first byte that is not valid UTF-8 is given;
    save the file as UTF-8.""")
declare("KNO-YAML-EMPTY", E, "the file holds no document", """
    The file is empty or holds only comments. Add the entity, starting with
    `$schema: <type>@<version>`, or delete the file.""")
declare("KNO-YAML-SYNTAX", E, "invalid YAML (the parser's own position and words)", """
    The YAML parser could not read the file; its own message and position are shown. Common causes
    are a missing space after a colon, unbalanced quotes or brackets, and wrong indentation.""")
declare("KNO-YAML-TAB", E, "a tab is used for indentation", """
    YAML allows only spaces for indentation. Replace the tab at the given position with spaces.""")
declare("KNO-YAML-LINE-BREAK", E, "a raw U+2028, U+2029 or U+0085, which YAML parsers disagree on", """
    YAML 1.1 parsers (libyaml, PyYAML, and knoc's own parser, which uses libyaml) read these
    invisible characters as line breaks; the YAML 1.2 spec reads them as text, and other parsers
    refuse them: the same file would give other values, and other line numbers, in other tools.
    They usually arrive pasted from a web page or a word processor. Remove the character, or write
    it as an escape (`"\\u2028"`) inside a double-quoted string; `knoc new` and `knoc import`
    write it so.""")
declare("KNO-YAML-COMMENT", W, "a `#` right after a value's text begins a comment: the rest of the line is not in it",
        """
    In YAML a `#` after a space begins a comment, to the end of the line: `description: Fixes
    issue #42 fast` holds `Fixes issue`, and the card says so; a line that begins with `#` is a
    comment line, so a value written over several lines loses one that starts `#1 in its class`.
    knoc warns where a `#` after an unquoted value, or at the start of the line after it (indented
    as its next line would be), is followed by text at once (`#42`, `#tag`), as a comment seldom
    is. Quote the whole value to keep the `#`; if it is a comment, put a space after the `#`.""")
declare("KNO-YAML-DUPLICATE-KEY", E, "a key appears twice in one mapping", """
    A YAML mapping may hold each key once; a second one would silently replace the first in most
    tools. Remove or rename one of them.""")
declare("KNO-YAML-TAG", E, "a tag outside plain JSON values (`!!binary`, `!!set`, custom tags)", """
    Entities hold plain mappings, lists, strings, numbers and booleans, the values JSON Schema can
    validate. Remove the tag; a date is read as a plain string.""")
declare("KNO-YAML-NOT-MAPPING", E, "the top level is a list or a scalar", """
    An entity is a mapping of keys at the top level, starting with `$schema: <type>@<version>`.""")
declare("KNO-YAML-ALIAS-LIMIT", E, "aliases expand the file past 100,000 nodes or 4 MiB of text", """
    YAML aliases let a small file stand for an enormous value (the "billion laughs" attack); every
    later stage would walk the expanded value. Write the values out, or use fewer nested aliases.""")
declare("KNO-YAML-LIMIT", E, "a value is past a limit: nesting depth, keys in a mapping, or digits of an integer", """
    Entities are small documents. knoc refuses values no real entity needs (mappings and lists
    nested more than 64 deep, a mapping of more than 5,000 keys, an integer of more than 64
    digits), so that hostile input cannot exhaust the stack, the memory or the time of a build.
    The README's "Limits" section lists every limit.""")
declare("KNO-YAML-NUMBER", E, "a number JSON cannot carry (infinity or not-a-number)", """
    Entities hold JSON values, and JSON has no infinity or not-a-number (`.inf`, `.nan`, or a
    float too large to represent). Write a finite number, or quote the value as a string.""")
declare("KNO-YAML-ALIAS-CYCLE", E, "an alias refers to a node that contains it", """
    A recursive value cannot be validated or published. Replace the recursive alias with the value
    it should hold.""")
# --- specs and declarations --------------------------------------------------
declare("KNO-SPEC-SCHEMA", E, "a spec's `spec.schema` is missing or not a valid JSON Schema", """
    A spec entity carries its JSON Schema (draft 2020-12) under `spec.schema`, and that schema's
    `$schema` property enum lists the `type@version` strings it accepts. The schema must itself be
    valid against the draft 2020-12 metaschema, and name no other dialect: a `$schema` keyword of
    draft-07 or 2019-09 anywhere in it would be read by that draft's rules where a `$ref` reaches
    it (draft-07 asserts `format` and ignores what stands beside a `$ref`), while the spec's own
    check and `knoc specs check` read 2020-12.""")
declare("KNO-SPEC-REF", E, "a `$ref` in a spec does not resolve", """
    A spec may refer to another spec as kno://specs/<slug>#/<json pointer>, or inside itself with a
    `#/...` pointer. The reference named here lands on nothing.""")
declare("KNO-SPEC-CONFLICT", E, "two specs accept the same `type@version`", """
    Each `type@version` must be accepted by exactly one spec, or knoc could not tell which schema
    validates an entity. Remove the version from one spec's `$schema` enum.""")
declare("KNO-SPEC-BREAKING", E, "a spec change refuses documents its version promises to accept", """
    Minor and patch versions of a spec are strictly additive: every document valid under the old
    version stays valid. This change refuses one, shown as a counterexample that the old schema
    accepts and the new one refuses. Keep what the old version accepted, or bump the spec's major
    version (and tell the repos that pin it).""")
declare("KNO-SPEC-MAJOR", W, "a breaking spec change, announced by a major version bump", """
    The change refuses documents the old version accepted, as a major bump allows. Each is shown
    with a counterexample, and the content entities it makes invalid are listed: migrate them
    before they are built against the new version.""")
declare("KNO-SPEC-UNBUMPED", E, "a spec's schema changed but its version does not say so", """
    What a spec's schema accepts changed, and its `version` did not move enough: any schema change
    needs a new version, an additive one at least a minor bump, a breaking one a major bump. A
    change to titles, descriptions or examples only needs none.""")
declare("KNO-SPEC-UNDECIDED", W, "knoc cannot tell whether a spec change breaks documents", """
    No rule decides this change and knoc found no counterexample; the change may still refuse a
    document the old version accepted. Check it by hand, or bump the major version to be safe.""")
declare("KNO-SPEC-BROKEN-ENTITY", W, "an entity the old version of its spec accepts and the new one refuses", """
    A spec change makes this entity invalid: the next build fails on it. Change the entity, or
    the spec.""")
declare("KNO-DECL-MISSING", E, "the entity has no `$schema`", """
    Every entity declares its type and version as `$schema: <type>@<semver>`, e.g.
    `agent-blueprint@0.4.0`; it picks the spec that validates the file.""")
declare("KNO-DECL-FORMAT", E, "`$schema` is not `<type>@<semver>`", """
    The declaration is a lowercase type name, `@`, and a semantic version such as 0.2.0.""")
declare("KNO-TYPE-UNKNOWN", E, "no spec accepts the type", """
    No spec under specs/ accepts this entity type at any version. Check the spelling (a close match
    is suggested), or add a spec for the type.""")
declare("KNO-VERSION-UNACCEPTED", E, "the spec does not accept that version (the accepted ones are listed)", """
    The type is known but no spec accepts this version of it. Use one of the listed versions, or
    add the version to the spec's `$schema` enum (minor versions must stay additive).""")
declare("KNO-TYPE-MISMATCH", E, "`type:` disagrees with `$schema`", """
    An entity may repeat its type as `type:`; it must then be the type `$schema` declares.""")
# --- schema errors -----------------------------------------------------------
declare("KNO-SCHEMA-REQUIRED", E, "a required field is missing (points at the mapping's key)", """
    The spec requires this field in the mapping shown. Add it; the hint names the spec.""")
declare("KNO-SCHEMA-TYPE", E, "a value has the wrong type", """
    The value is of another type than the spec allows, for example a number where a string belongs
    (quote it) or an empty value where a mapping belongs.""")
declare("KNO-SCHEMA-ENUM", E, "a value is not one of the allowed ones", """
    The spec allows only the listed values here; a close match is suggested when there is one.""")
declare("KNO-SCHEMA-UNKNOWN-FIELD", E, 'a field the spec does not define (with a "did you mean")', """
    Specs close their mappings, so a misspelt or misplaced key is an error rather than silently
    ignored. Fix the spelling (a close match is suggested) or the indentation, or remove the key.""")
declare("KNO-SCHEMA-PATTERN", E, "a string does not match the spec's pattern", """
    The string must match the regular expression the spec gives for this field.""")
declare("KNO-SCHEMA-CONST", E, "a value differs from the one the spec fixes", """
    The spec fixes this field to one value (its `const`); write exactly that value, or remove the
    field where it is optional.""")
declare("KNO-SCHEMA-RANGE", E, "a number is out of range", """
    The number is below the spec's minimum or above its maximum.""")
declare("KNO-SCHEMA-SIZE", E, "a list, string or mapping is too short or too long", """
    The spec bounds the number of items, characters or keys here.""")
declare("KNO-SCHEMA", E, "any other schema rule (the message is the validator's)", """
    A JSON Schema rule without a more specific code failed; the validator's own message says which.""")
declare("KNO-ID-ULID", E, "an id is not a ULID", """
    Entity ids are ULIDs: 26 characters of Crockford base32 (no I, L, O or U), the first at most 7.
    `knoc new` writes fresh ones.""")
declare("KNO-GOAL-TARGET", E, "a goal has both `target` and `target_query`", """
    A goal's target is either a literal value (`target`) or a query evaluated at run time
    (`target_query`), never both.""")
declare("KNO-OWNERSHIP-TENANT", E, "`context: tenant` without `possibility_slug`", """
    A tenant-owned agent names the realm it belongs to with `ownership.possibility_slug`. Add it, or
    use `context: platform`.""")
declare("KNO-SERVICE-CLASS", E, "`service_class` is not utility, principal or ephemeral", """
    An agent may declare its service class as utility, principal or ephemeral. `unknown` is what an
    agent without `service_class` is; it cannot be declared.""")
declare("KNO-BOUNDARY-WORDING", W, "a boundary does not start with MUST NOT or SHOULD NOT", """
    Boundaries say whether a rule is hard (MUST NOT) or advice (SHOULD NOT); a boundary without
    either leaves readers and tools guessing.""")
# --- resolution ----------------------------------------------------------------
declare("KNO-ID-DUPLICATE", E, "two entities share an id (the later file by path is flagged)", """
    Ids are unique across the whole repo: `pspace://<type>:<id>` references and the runtime index
    rely on it. Give the flagged entity a fresh ULID.""")
declare("KNO-SLUG-DUPLICATE", E, "two entities of one kind share a slug", """
    Slugs name entities within their kind (`kno://<collection>/<slug>`) and become output paths, so
    they are unique per kind.""")
declare("KNO-SLUG-UNSAFE", E, "a slug is not safe as one path segment", """
    A slug becomes one segment of an output path; it may hold lowercase letters, digits and single
    hyphens.""")
declare("KNO-SLUG-FILE", W, "an entity's slug is not its file's name", """
    References name entities by slug (`kno://agent-blueprints/echo-agent`, a perception domain in
    `persona.perception.domains`), and people follow them to `<slug>.kno`; `knoc new` and `knoc
    import` name files so. A file copied or renamed without its slug leaves them looking in the
    wrong file. Rename the file, or change the slug (and what refers to it).""")
declare("KNO-RESOLVE-XRI", E, "a `kno://` or `pspace://` reference does not resolve", """
    References are kno://<collection>/<slug> or pspace://<type>:<id-or-slug> and must land on an
    entity of the repo. A close match is suggested when there is one.""")
declare("KNO-RESOLVE-DOMAIN", E, "a perception domain does not exist", """
    An agent's `persona.perception.domains` names perception domains by slug; each must exist as
    content/perception-domains/<slug>.kno.""")
declare("KNO-RESOLVE-COMPOSES", E, "`composes` names something that is not another agent", """
    `composes` lists the agents this one delegates to: each entry is another agent
    (kno://agent-blueprints/<slug>), never the agent itself.""")
declare("KNO-EXTENDS-CYCLE", E, "`extends` links form a cycle", """
    An entity cannot extend itself, directly or through others. The cycle is shown from the entity
    where it was found; remove one of its links.""")
