"""Every diagnostic code knoc emits, declared once: its severity, a one-line
summary (the SARIF rule's short description and the README's table) and an
explanation (`knoc explain CODE`, the SARIF rule's full description)."""

from __future__ import annotations

from dataclasses import dataclass

from knoc.diagnostics.model import Diagnostic, Related, Severity, Span

E, W = Severity.ERROR, Severity.WARNING


@dataclass(frozen=True)
class Code:
    id: str
    severity: Severity
    summary: str
    explanation: str


CODES: dict[str, Code] = {}


def _declare(id_: str, severity: Severity, summary: str, explanation: str) -> None:
    assert id_ not in CODES, id_
    CODES[id_] = Code(id_, severity, summary, " ".join(explanation.split()))


# --- the command line and its surroundings (exit code 2) -----------------
_declare("KNO-CONFIG", E, "`knoc.toml` or the command line is wrong, or no content repo was found", """
    knoc looks for the content repo by walking up from the working directory to the first folder
    holding knoc.toml or specs/, then reads the [knoc] table of knoc.toml. This code covers an
    unknown setting, a value of the wrong type, a folder that lies outside the repo, an unknown A2A
    target and options that make no sense together. Fix the named setting or option; `--root`
    points knoc at a repo explicitly.""")
_declare("KNO-GIT", E, "`knoc diff`: git is missing, this is not a git work tree, or the ref is unknown", """
    `knoc diff` compiles the sources as they were at a git ref (exported with `git archive`, never
    touching the work tree) and compares the cards. It needs git on the PATH, a content repo inside
    a git work tree and a ref git knows. Pass `--base` with a branch, tag or commit.""")
_declare("KNO-OUTPUT", E, "the output folder holds files knoc did not write; knoc will not replace it", """
    A build writes its tree aside and swaps it in place of the output folder. knoc only replaces a
    folder that is absent or that its own manifest.json describes, so that a misconfigured `output`
    setting can never delete someone's files. Move the named files away, or point `output` in
    knoc.toml at another folder.""")
_declare("KNO-WRITE", E, "knoc will not write there: through a link, or where a file stands for a folder", """
    Commands that write (init, new, import, migrate, specs vendor, build) write only inside the
    repo's own folders: never through a link (which could point anywhere, another repo's files
    included), never over a link, and never where a file stands where a folder belongs. Replace
    the link with a real folder or file, or move the file away; nothing was written.""")
_declare("KNO-LOCKED", E, "another knoc command kept the repo busy too long; this one did nothing", """
    One knoc command at a time compiles a repo and writes its build/ and cache (a `knoc serve
    --watch` rebuild and the pre-commit hook's build, say): a second one waits for the first,
    saying so, for up to ten minutes. Past that it stops without writing anything. Let the other
    command finish, or stop it, and run this one again.""")
_declare("KNO-MACHINE", E, "the system refused (disk full, permission denied, read-only, out of files)", """
    The operating system refused what knoc asked of it: the disk or quota is full, a file or folder
    may not be read or written, the file system is read-only, or too many files are open. This is
    the machine's state, not a problem in your sources or a bug in knoc; the message names the
    file, and a failed build leaves the previous output as it was. Fix the named cause and run the
    command again.""")
_declare("KNO-CACHE", E, "a file of the cache under `.knoc-cache/` no longer holds what it held; it was dropped", """
    The cache keeps the large files a run rendered (the index, the catalog page, the manifest) as
    they are, named by their sha256, and trusts one whose size and mtime did not change; a run
    after a small edit also reads unchanged cards from it. A file damaged without either changing,
    or a card no longer there, is found when it is read, too late for this run: knoc drops what
    named it and stops. Run the command again (or delete `.knoc-cache/`, always safe).""")
_declare("KNO-SERVE", E, "`knoc serve`: nothing built to serve, no such `--site` tree, or the port is taken", """
    `knoc serve` serves the build/site/ tree of the last build on 127.0.0.1. Run `knoc build` first
    (or use `--watch`, which builds before serving), name an existing host tree with `--site`, or
    pick another `--port` (0 picks a free one).""")
_declare("KNO-EXISTS", E, "`knoc new`, `import` or `migrate`: the file it would write exists; it is left as it is", """
    Commands that write sources never replace an existing file unless told to: the check and the
    create are one step, so a file cannot be lost to a race either. Pick another name, move the
    file away, or pass `--force` where the command has it.""")
_declare("KNO-MIGRATE", E, "`knoc migrate`: a named file is not a legacy agent, or there are none to migrate", """
    `knoc migrate` rewrites legacy agents (agent-card@0.x, or service-config@0.3.0 with subtype
    agent-card) as agent-blueprint@0.2.0. Name only such files, or run it without arguments to
    migrate every file under content/agents/.""")
_declare("KNO-MIGRATE-CHANGED", E,
         "`knoc migrate` would change a built file; it wrote nothing (a knoc bug: report it)", """
    Before writing, migrate compiles the repo as it is and as migrated in a scratch copy, and
    refuses unless every built file but the manifest comes out byte for byte the same. A difference
    is a knoc bug: nothing was written; please report it with the legacy file.""")
_declare("KNO-IMPORT-READ", E, "`knoc import`: the file or URL cannot be read, or is not JSON", """
    `knoc import` reads an A2A Agent Card from a file or URL (a URL without .json gets
    /.well-known/agent-card.json appended). The input could not be read, is not UTF-8, or is not
    JSON; the position of a JSON syntax error is given.""")
_declare("KNO-IMPORT-NOT-CARD", E,
         "`knoc import`: the JSON is not an A2A Agent Card (no name, service url or skill); nothing written", """
    An Agent Card is a JSON object with a name, a service url and at least one skill. JSON without
    them (a discovery document, an MCP manifest, a list) is refused and nothing is written for it.""")
_declare("KNO-IMPORT-SIGNATURE", W, "`knoc import`: the original card was signed (and whether that verified)", """
    A signature covers the original card's bytes, so the blueprint never carries it: sign the
    built card with `knoc build --sign-key`. With `--allow-jku` import fetches the key sets the
    signatures name and says whether one verified; review who published the original either way.""")
_declare("KNO-IMPORT-CHANGED", W, "`knoc import` dropped or converted a field (the JSON path says which)", """
    Cards in the wild mix versions and shapes. import keeps what A2A defines and converts what it
    can do unambiguously (a string where a list belongs, a boolean written as a string, a 1.0
    interface); everything dropped or converted is one warning with its JSON path. Review the
    written blueprint.""")
_declare("KNO-INTERNAL", E, "knoc hit a bug (exit 3): please report it with the named file", """
    knoc failed on its own, not because of your sources: an exception no rule anticipated. The
    diagnostic names the file being processed; the run exits with code 3 and writes nothing.
    Please report it with that file and the output of the same command with `--debug`, which
    adds the traceback.""")
# --- reading sources ----------------------------------------------------------
_declare("KNO-IO-READ", E, "a file could not be read", """
    A source file listed under specs/ or content/ could not be opened or read (permissions, a file
    removed during the build). The operating system's reason is given.""")
_declare("KNO-IO-REFUSED", E, "a file knoc will not read: not a regular file, a link out of the repo, or too large", """
    knoc reads only regular files inside the repo, each at most 1 MiB: a FIFO would block the
    build forever, a link to /dev/zero never ends, and a link out of the repo would publish what
    lies outside it. Remove the file or the link, or split a file that is too large.""")
_declare("KNO-YAML-ENCODING", E, "the file is not UTF-8 (points at the first bad byte)", """
    .kno files are UTF-8 text. The position of the first byte that is not valid UTF-8 is given;
    save the file as UTF-8.""")
_declare("KNO-YAML-EMPTY", E, "the file holds no document", """
    The file is empty or holds only comments. Add the entity, starting with
    `$schema: <type>@<version>`, or delete the file.""")
_declare("KNO-YAML-SYNTAX", E, "invalid YAML (the parser's own position and words)", """
    The YAML parser could not read the file; its own message and position are shown. Common causes
    are a missing space after a colon, unbalanced quotes or brackets, and wrong indentation.""")
_declare("KNO-YAML-TAB", E, "a tab is used for indentation", """
    YAML allows only spaces for indentation. Replace the tab at the given position with spaces.""")
_declare("KNO-YAML-DUPLICATE-KEY", E, "a key appears twice in one mapping", """
    A YAML mapping may hold each key once; a second one would silently replace the first in most
    tools. Remove or rename one of them.""")
_declare("KNO-YAML-TAG", E, "a tag outside plain JSON values (`!!binary`, `!!set`, custom tags)", """
    Entities hold plain mappings, lists, strings, numbers and booleans, the values JSON Schema can
    validate. Remove the tag; a date is read as a plain string.""")
_declare("KNO-YAML-NOT-MAPPING", E, "the top level is a list or a scalar", """
    An entity is a mapping of keys at the top level, starting with `$schema: <type>@<version>`.""")
_declare("KNO-YAML-ALIAS-LIMIT", E, "aliases expand the file past 100,000 nodes or 4 MiB of text", """
    YAML aliases let a small file stand for an enormous value (the "billion laughs" attack); every
    later stage would walk the expanded value. Write the values out, or use fewer nested aliases.""")
_declare("KNO-YAML-LIMIT", E, "a value is past a limit: nesting depth, keys in a mapping, or digits of an integer", """
    Entities are small documents. knoc refuses values no real entity needs (mappings and lists
    nested more than 64 deep, a mapping of more than 5,000 keys, an integer of more than 64
    digits), so that hostile input cannot exhaust the stack, the memory or the time of a build.
    The README's "Limits" section lists every limit.""")
_declare("KNO-YAML-NUMBER", E, "a number JSON cannot carry (infinity or not-a-number)", """
    Entities hold JSON values, and JSON has no infinity or not-a-number (`.inf`, `.nan`, or a
    float too large to represent). Write a finite number, or quote the value as a string.""")
_declare("KNO-YAML-ALIAS-CYCLE", E, "an alias refers to a node that contains it", """
    A recursive value cannot be validated or published. Replace the recursive alias with the value
    it should hold.""")
# --- specs and declarations --------------------------------------------------
_declare("KNO-SPEC-SCHEMA", E, "a spec's `spec.schema` is missing or not a valid JSON Schema", """
    A spec entity carries its JSON Schema (draft 2020-12) under `spec.schema`, and that schema's
    `$schema` property enum lists the `type@version` strings it accepts. The schema must itself be
    valid against the draft 2020-12 metaschema.""")
_declare("KNO-SPEC-REF", E, "a `$ref` in a spec does not resolve", """
    A spec may refer to another spec as kno://specs/<slug>#/<json pointer>, or inside itself with a
    `#/...` pointer. The reference named here lands on nothing.""")
_declare("KNO-SPEC-CONFLICT", E, "two specs accept the same `type@version`", """
    Each `type@version` must be accepted by exactly one spec, or knoc could not tell which schema
    validates an entity. Remove the version from one spec's `$schema` enum.""")
_declare("KNO-DECL-MISSING", E, "the entity has no `$schema`", """
    Every entity declares its type and version as `$schema: <type>@<semver>`, e.g.
    `agent-blueprint@0.2.0`; it picks the spec that validates the file.""")
_declare("KNO-DECL-FORMAT", E, "`$schema` is not `<type>@<semver>`", """
    The declaration is a lowercase type name, `@`, and a semantic version such as 0.2.0.""")
_declare("KNO-TYPE-UNKNOWN", E, "no spec accepts the type", """
    No spec under specs/ accepts this entity type at any version. Check the spelling (a close match
    is suggested), or add a spec for the type.""")
_declare("KNO-VERSION-UNACCEPTED", E, "the spec does not accept that version (the accepted ones are listed)", """
    The type is known but no spec accepts this version of it. Use one of the listed versions, or
    add the version to the spec's `$schema` enum (minor versions must stay additive).""")
_declare("KNO-TYPE-MISMATCH", E, "`type:` disagrees with `$schema`", """
    An entity may repeat its type as `type:`; it must then be the type `$schema` declares.""")
# --- schema errors -----------------------------------------------------------
_declare("KNO-SCHEMA-REQUIRED", E, "a required field is missing (points at the mapping's key)", """
    The spec requires this field in the mapping shown. Add it; the hint names the spec.""")
_declare("KNO-SCHEMA-TYPE", E, "a value has the wrong type", """
    The value is of another type than the spec allows, for example a number where a string belongs
    (quote it) or an empty value where a mapping belongs.""")
_declare("KNO-SCHEMA-ENUM", E, "a value is not one of the allowed ones", """
    The spec allows only the listed values here; a close match is suggested when there is one.""")
_declare("KNO-SCHEMA-UNKNOWN-FIELD", E, 'a field the spec does not define (with a "did you mean")', """
    Specs close their mappings, so a misspelt or misplaced key is an error rather than silently
    ignored. Fix the spelling (a close match is suggested) or the indentation, or remove the key.""")
_declare("KNO-SCHEMA-PATTERN", E, "a string does not match the spec's pattern", """
    The string must match the regular expression the spec gives for this field.""")
_declare("KNO-SCHEMA-CONST", E, "a value differs from the one the spec fixes", """
    The spec fixes this field to one value (its `const`); write exactly that value, or remove the
    field where it is optional.""")
_declare("KNO-SCHEMA-RANGE", E, "a number is out of range", """
    The number is below the spec's minimum or above its maximum.""")
_declare("KNO-SCHEMA-SIZE", E, "a list, string or mapping is too short or too long", """
    The spec bounds the number of items, characters or keys here.""")
_declare("KNO-SCHEMA", E, "any other schema rule (the message is the validator's)", """
    A JSON Schema rule without a more specific code failed; the validator's own message says which.""")
_declare("KNO-ID-ULID", E, "an id is not a ULID", """
    Entity ids are ULIDs: 26 characters of Crockford base32 (no I, L, O or U), the first at most 7.
    `knoc new` writes fresh ones.""")
_declare("KNO-GOAL-TARGET", E, "a goal has both `target` and `target_query`", """
    A goal's target is either a literal value (`target`) or a query evaluated at run time
    (`target_query`), never both.""")
_declare("KNO-OWNERSHIP-TENANT", E, "`context: tenant` without `possibility_slug`", """
    A tenant-owned agent names the realm it belongs to with `ownership.possibility_slug`. Add it, or
    use `context: platform`.""")
_declare("KNO-SERVICE-CLASS", E, "`service_class` is not utility, principal or ephemeral", """
    An agent may declare its service class as utility, principal or ephemeral. `unknown` is what an
    agent without `service_class` is; it cannot be declared.""")
_declare("KNO-BOUNDARY-WORDING", W, "a boundary does not start with MUST NOT or SHOULD NOT", """
    Boundaries say whether a rule is hard (MUST NOT) or advice (SHOULD NOT); a boundary without
    either leaves readers and tools guessing.""")
# --- resolution ----------------------------------------------------------------
_declare("KNO-ID-DUPLICATE", E, "two entities share an id (the later file by path is flagged)", """
    Ids are unique across the whole repo: `pspace://<type>:<id>` references and the runtime index
    rely on it. Give the flagged entity a fresh ULID.""")
_declare("KNO-SLUG-DUPLICATE", E, "two entities of one kind share a slug", """
    Slugs name entities within their kind (`kno://<collection>/<slug>`) and become output paths, so
    they are unique per kind.""")
_declare("KNO-SLUG-UNSAFE", E, "a slug is not safe as one path segment", """
    A slug becomes one segment of an output path; it may hold lowercase letters, digits and single
    hyphens.""")
_declare("KNO-RESOLVE-XRI", E, "a `kno://` or `pspace://` reference does not resolve", """
    References are kno://<collection>/<slug> or pspace://<type>:<id-or-slug> and must land on an
    entity of the repo. A close match is suggested when there is one.""")
_declare("KNO-RESOLVE-DOMAIN", E, "a perception domain does not exist", """
    An agent's `persona.perception.domains` names perception domains by slug; each must exist as
    content/perception-domains/<slug>.kno.""")
_declare("KNO-RESOLVE-COMPOSES", E, "`composes` names something that is not another agent", """
    `composes` lists the agents this one delegates to: each entry is another agent
    (kno://agent-blueprints/<slug>), never the agent itself.""")
_declare("KNO-EXTENDS-CYCLE", E, "`extends` links form a cycle", """
    An entity cannot extend itself, directly or through others. The cycle is shown from the entity
    where it was found; remove one of its links.""")
# --- projection -------------------------------------------------------------------
_declare("KNO-PROJECT-REQUIRED", E, "a field A2A requires is missing and cannot be derived", """
    The A2A card needs this field (a description, a skill's description or tags, a provider url)
    and knoc has no rule to derive it.""")
_declare("KNO-PROJECT-AUTH", E, "security cannot be mapped (legacy scheme, undeclared scheme)", """
    Security is declared once: either the legacy `authentication.schemes` (Bearer, Basic and Digest
    map directly) or `security_schemes`, and every requirement names a declared scheme. A 0.3 card
    (and a compat card's 0.3 fields) cannot carry an OAuth scheme whose only flow is device code:
    when every alternative of a requirement needs one, the card would look open, so it is refused.""")
_declare("KNO-PROJECT-EXTENDED", W, "an extended card is offered, but no security scheme is declared", """
    `capabilities.extended_agent_card` (0.3: `supportsAuthenticatedExtendedCard`) tells clients to
    authenticate and fetch a fuller card. A2A 1.0 (sections 3.1.11 and 13.3) has them authenticate
    with a scheme the card declares; with none declared, no client can. Declare the scheme under
    `security_schemes`, or drop the flag.""")
_declare("KNO-PROJECT-URL", E, "the url cannot be turned into a card path", """
    A card is published at <url>/.well-known/agent-card.json under build/site/<host>/<path>, so its
    url must be an absolute http(s) URL without `.` or `..` segments.""")
_declare("KNO-PROJECT-DROPPED", W, "a field the target A2A version lacks is left out", """
    The build target cannot carry this field, so the published card leaves it out. Remove it, or
    build for a target that carries it.""")
_declare("KNO-CARD-GRPC-ADDRESS", W, "a gRPC interface's url is not a host:port address", """
    A gRPC channel dials hostname:port, not a url with a scheme and a path (A2A after 1.0.1 says so
    for gRPC interfaces). Write the interface's url as `host:port`, for example
    `grpc.example.com:443`.""")
_declare("KNO-CARD-PLACEHOLDER", W, "a public card still holds a skeleton's placeholder text", """
    `knoc new agent` writes placeholder text (the card's description, the first skill's name and
    description) so the skeleton validates. A public card that still says it tells clients
    nothing about what the agent does: write the real text.""")
_declare("KNO-CARD-URL-LOCAL", W, "a public card's url can be reached only from this machine or network", """
    The url is localhost, a loopback, private or link-local address: clients elsewhere cannot
    reach the agent through the published card. Publish the url clients will use, or keep the
    agent private (`visibility: private`) while it runs locally.""")
_declare("KNO-CARD-URL-HTTP", W, "a public card's url is plain http", """
    Clients send tasks, and often credentials, to the card's url. Over plain http they travel
    unencrypted and can be altered on the way; serve the agent over https.""")
_declare("KNO-CARD-SIZE", E, "a card would be larger than a published card may be (256 KiB)", """
    Clients fetch a card on every discovery and hold it in memory; a card of megabytes is a
    mistake (a pasted document, aliases expanded) or an attack on them. knoc refuses to publish
    a card over 256 KiB: shorten its descriptions and examples, or split its skills.""")
_declare("KNO-PROJECT-WIRE", E, "the card does not fit the wire model (a knoc bug: please report)", """
    Every card passes through the target's wire models before it is written. A card that does not
    fit means a derivation rule let something through; please report it with the entity.""")
_declare("KNO-OUTPUT-COLLISION", E, "two outputs (cards, pages, index files) would be written to one path", """
    Every published file has one owner. Two card urls, extension URIs or knoc's own files
    (the catalog page, the index, `_headers`) that land on one path, or a file where another
    output needs a folder, would overwrite each other. Give the entity a url or uri of its own;
    the message names the other source.""")
_declare("KNO-SERVICE-CLASS-TWICE", E, "`service_class` and a hand-written service-class extension entry", """
    knoc writes the service-class extension entry from `service_class`; keep that and remove the
    hand-written entry.""")
_declare("KNO-CONFIG-PRIMARY", E, "knoc.toml's `[primary]` names an agent that is not a host's public agent", """
    A host serves one agent's card at its origin root (`https://host/.well-known/agent-card.json`,
    where A2A 8.2 and clients that resolve a card from a url's origin look): its agent at the root
    url, else its only public agent, else the one `[primary]` in knoc.toml names for it. The named
    agent must publish its card on that host, and a host whose root url already is an agent's
    needs no line.""")
_declare("KNO-URL-DUPLICATE", E, "two public agents share a url", """
    Two public agents with one url would share one card path. The first by slug keeps it; give the
    other its own url.""")
# --- extensions and the capability contract ---------------------------------------
_declare("KNO-EXT-SCHEMA", E, "an extension's `params_schema` is not a valid JSON Schema", """
    An extension entity describes the params its card entries take as a JSON Schema (draft
    2020-12); cards' entries are checked against it.""")
_declare("KNO-EXT-DUPLICATE", E, "an extension URI is declared by two entities, or twice on one card", """
    One entity per extension URI, and one entry per URI on a card.""")
_declare("KNO-EXT-UNVERSIONED", W, "a `versioned` extension's URI carries no version segment (such as /v1)", """
    A versioned extension mints a new URI for each breaking change, so its URI ends in a version
    segment such as /v1. Add one, or declare `evolution: additive`.""")
_declare("KNO-EXT-UNKNOWN", W, "a card declares an extension no extension entity describes", """
    Nothing in the repo says what this extension URI means or which params it takes. Add
    content/extensions/<name>.kno, or check the URI for a typo.""")
_declare("KNO-EXT-PARAMS", E, "a card's extension params do not fit the extension's `params_schema`", """
    The entry's params are checked against the extension entity's params_schema; the first
    problem and its location are given.""")
_declare("KNO-EXT-PARAMS-UNKNOWN", W, "a card's extension params name a field the `params_schema` does not define", """
    Clients ignore params they do not know (forward compatibility), so an unknown name is likely a
    typo. Add it to the extension's params_schema, or remove it.""")
_declare("KNO-EXT-DEPENDENCY", E, "a required extension's dependency is not declared on the same card", """
    A required extension that depends on another needs that one on the same card.""")
_declare("KNO-CONTRACT-BY-HAND", E,
         "a card writes the capability-contract extension entry itself (knoc generates it)", """
    knoc writes the capability-contract entry from `min_protocol_version`, `max_protocol_version`,
    `protocol_versions` and the capability flags; remove the hand-written entry.""")
_declare("KNO-PROTOCOL-RANGE", E,
         "the protocol range is inverted (min above max) or leaves out a version an interface speaks", """
    The declared protocol range must hold together: min at most max, and every version the url or
    an interface speaks (the build target's, when none is stated) inside it.""")
_declare("KNO-PROTOCOL-PATCH", W, "a protocol version carries a patch number", """
    Cards name A2A protocol versions as Major.Minor (A2A 1.0, section 3.6): "1.0", not "1.0.0".
    knoc publishes the Major.Minor form; write it that way in the source.""")
_declare("KNO-PROTOCOL-TARGET", E, "an A2A 0.3 card has no interface that speaks A2A 0.3", """
    A 0.3 card sends its clients to its `url`, so that url must answer them: the card's url is the
    first interface (the main url first) whose `protocol_versions` list 0.3 (or another version
    before 1.0), and the build refuses a card where none does. Add "0.3" to the versions of the
    interface that answers 0.3 clients, or build for 1.0.""")
_declare("KNO-PROTOCOL-UNSTATED", W, "an older card states no protocol versions: the target's default is claimed", """
    An agent-card or agent-blueprint before 0.4.0 that states no `protocol_versions` for its url
    is published with the build target's versions (1.0 and 0.3 for compat, 0.3 for 0.3, 1.0 for
    1.0; an additional interface: the first). So one blueprint makes different claims per target. State each
    interface's versions, or declare `agent-blueprint@0.4.0`, where an unstated interface speaks
    A2A 1.0 under every target.""")
_declare("KNO-LEGACY-VIEW", W, "0.3 clients cannot be served: no agent.json, or a compat card without 0.3 fields", """
    agent.json (read by 0.2 clients) and a compat card's 0.3 top-level fields (read by 0.3 clients)
    send a client to an interface that speaks A2A 0.3 (or another version before 1.0). When no
    interface of the agent does, pointing them at a 1.0-only endpoint would fail every request, so
    agent.json is not written and a compat card goes out as a 1.0 card. Add "0.3" to the
    `protocol_versions` of an interface that answers 0.3 clients, if one does. agent.json is not
    written either when every alternative of a security requirement needs an OAuth flow only A2A
    1.0 has (device code): its 0.3 card would state no requirement, and look open.""")
_declare("KNO-CAP-DEPRECATED", W,
         "a card declares, or a `composes` link requires, a deprecated (tier 3) capability", """
    Deprecated capabilities are still honoured but discouraged; the message names the capability
    that replaces it.""")
_declare("KNO-CAP-UNKNOWN", E, "a `composes` link requires something that is not a capability", """
    `requires` names capability flags (tier 1 and 2, e.g. streaming_message) or extensions as
    ext:<uri>. A close match is suggested.""")
_declare("KNO-CHAIN-REQUIRES", E, "an agent on a delegation chain does not declare what a link above it requires", """
    A `composes` link's `requires` holds for every agent reachable below it. The message names the
    whole chain to the agent that does not declare the capability.""")
_declare("KNO-CHAIN-PROTOCOL", E, "two agents on a delegation link share no A2A protocol version", """
    A delegation link needs at least one A2A protocol version both agents speak. Widen one side's
    protocol range or interface versions.""")
_declare("KNO-COMPOSES-CYCLE", W, "`composes` links form a delegation cycle", """
    A task handed round a delegation loop can come back forever. A loop may be deliberate, so this
    is a warning: break one link, or make sure the agents stop delegating.""")
# --- tools ---------------------------------------------------------------------------
_declare("KNO-SIGNING", E, "a signing key cannot be used, or must not be (exit 2)", """
    `--sign-key`, KNOC_SIGNING_KEY and knoc.toml's `[signing] key` name the keys a build signs
    with. A private key must be an unencrypted PEM Ed25519 or P-256 key kept outside the repo (a key
    file inside it is refused: once committed, it is public). `[signing] public` pins the public
    halves of the signing keys and `retired` lists old ones still published: each a PEM or JWK
    file inside the repo, or an inline JWK table. A build with a key knoc.toml does not pin is
    refused, and so is a check of a signed build when nothing pins its keys.""")
_declare("KNO-SIGNING-UNPINNED", W, "a build is signed with a key knoc.toml does not pin", """
    `knoc check` verifies a signed build without the private key, against the public keys knoc.toml
    pins in `[signing] public`. With no pin it cannot tell the build's key from one planted in its
    key sets, and refuses to check a signed build. Add the line the hint gives (the key's public
    half, safe to commit).""")
_declare("KNO-SIGNING-UNPROTECTED", W, "a signed card holds values no signature can protect", """
    Every A2A SDK drops empty strings, lists and objects from a card before checking a signature
    (section 8.4.1), so a copy without them verifies as well. Where an empty value means something
    (a requirement with no scopes, `bearer: []`; an empty requirement, "or no authentication"; an
    OAuth scope with no description; an empty value in an extension's params) a signed build lists
    each, once per card. Give requirements scopes where the scheme has them; otherwise the signature
    does not prove which authentication a client must use.""")
_declare("KNO-UNSIGNED", E, "a build without a signing key, in a repo that signs", """
    build/ is signed (its manifest names the keys), or knoc.toml pins a key, and no key was given, so
    the cards would go out without signatures. Nothing is written. Give the key (--sign-key,
    KNOC_SIGNING_KEY, or `key` under [signing]), or pass --unsigned to drop them on purpose.""")
_declare("KNO-SIGNATURE", E, "a card's signature does not verify, or a signed card lacks one", """
    In a repo that signs its cards (knoc.toml pins their keys), every card must carry exactly the
    signatures a build writes: one per pinned key the manifest names and per distinct view its
    clients verify (a2a-sdk 1.x, the JS SDK, a2a-sdk 0.3), each with knoc's protected header and
    nothing unprotected. A card that lost its signatures, one signed by another key, or one whose
    signatures carry extra members is an error. Rebuild with the signing key; `knoc verify CARD
    --jwks FILE` shows what failed.""")
_declare("KNO-DRIFT", E, "`knoc check`: a file under build/ is stale, missing or extra", """
    The committed build/ is not what the sources compile to. Run `knoc build` and commit build/.""")
_declare("KNO-CARD-BREAKING", W, "`knoc diff`: a change to a published card or domain that breaks clients", """
    Removing or moving something a client may rely on (an agent, a skill, a capability, an
    extension, an accepted mode, a protocol version, a domain's agent) breaks it. Under
    `--fail-on breaking` these are errors.""")


def diag(code: str, message: str, *, file: str | None = None, span: Span | None = None,
         hint: str | None = None, json_path: str | None = None, spec: str | None = None,
         detail: str | None = None, related: tuple[Related, ...] = ()) -> Diagnostic:
    """A diagnostic of a declared code, with the code's severity (KeyError
    for an undeclared code: a knoc bug the tests catch)."""
    return Diagnostic(code, CODES[code].severity, message, file, span, hint, json_path, spec, detail, related)
