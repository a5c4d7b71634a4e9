"""The codes of projecting cards, extensions and the capability contract,
and of the tools (signing, the drift guard, diff)."""

from __future__ import annotations

from knoc.diagnostics.registry import E, W, declare

# --- projection -------------------------------------------------------------------
declare("KNO-PROJECT-REQUIRED", E, "a field A2A requires is missing and cannot be derived", """
    The A2A card needs this field (a description, a skill's description or tags, a provider url)
    and knoc has no rule to derive it.""")
declare("KNO-SKILL-DUPLICATE", E, "two skills of one card have the same id", """
    A2A gives each skill a unique id, by which clients and registries tell the skills apart and
    name the one they ask for. A card with two skills of one id leaves which is meant to each
    reader; give each skill an id of its own.""")
declare("KNO-PROJECT-AUTH", E, "security cannot be mapped (legacy scheme, undeclared scheme, a scheme no client "
        "can use)", """
    Security is declared once: either the legacy `authentication.schemes` (Bearer, Basic and Digest
    map directly) or `security_schemes`, and every requirement names a declared scheme. A 0.3 card
    (and a compat card's 0.3 fields) cannot carry an OAuth scheme whose only flow is device code:
    when every alternative of a requirement needs one, the card would look open, so it is refused.
    A scheme no client can use is refused too: an API key with no name, or a header or cookie name
    HTTP does not allow (`X Key: v`); an HTTP scheme that is not one authentication scheme's name
    (`Bearer token`); in an A2A 1.0 or compat card, an OAuth flow with no scope (A2A 1.0 requires
    one, and a2a-sdk 1.x refuses the card).""")
declare("KNO-PROJECT-EXTENDED", W, "an extended card is offered, but no security scheme is declared", """
    `capabilities.extended_agent_card` (0.3: `supportsAuthenticatedExtendedCard`) tells clients to
    authenticate and fetch a fuller card. A2A 1.0 (sections 3.1.11 and 13.3) has them authenticate
    with a scheme the card declares; with none declared, no client can. Declare the scheme under
    `security_schemes`, or drop the flag.""")
declare("KNO-PROJECT-URL", E, "the url cannot be turned into a card path", """
    A card is published at <url>/.well-known/agent-card.json under build/site/<host>/<path>, so its
    url must be an absolute http(s) URL without `.` or `..` segments.""")
declare("KNO-PROJECT-DROPPED", W, "a field the target A2A version lacks is left out", """
    The build target cannot carry this field, so the published card leaves it out. Remove it, or
    build for a target that carries it.""")
declare("KNO-CARD-GRPC-ADDRESS", W, "a gRPC interface's url is not a host:port address", """
    A gRPC channel dials hostname:port, not a url with a scheme and a path (A2A after 1.0.1 says so
    for gRPC interfaces). Write the interface's url as `host:port`, for example
    `grpc.example.com:443`.""")
declare("KNO-CARD-PLACEHOLDER", W, "a public card still holds a skeleton's placeholder text", """
    `knoc new agent` writes placeholder text (the card's description, the first skill's name and
    description) so the skeleton validates. A public card that still says it tells clients
    nothing about what the agent does: write the real text.""")
declare("KNO-CARD-URL-LOCAL", W, "a public card's url or security endpoint can be reached only locally", """
    The url, or an endpoint of the card's security schemes (where a client gets its token), is
    localhost, a loopback, private or link-local address: clients elsewhere cannot reach the
    agent, or authenticate to it, through the published card. Publish the url clients will
    use, or keep the agent private (`visibility: private`) while it runs locally.""")
declare("KNO-CARD-URL-EXAMPLE", W, "a public card's url is on a domain reserved for examples", """
    example.com, example.net, example.org and the .example, .test and .invalid names (RFC 2606,
    6761) belong to no one: a card there sends clients nowhere. Publish the real url, or keep the
    agent private (`visibility: private`) until it has one.""")
declare("KNO-INTERFACE-CHOICE", W, "a2a-sdk and the JS SDK call different interfaces of one binding", """
    A 1.0 client calls one interface of a binding. a2a-sdk 1.x takes the first that speaks A2A 1.0
    (else the first past it, else the first of 0.3 or later); @a2a-js/sdk takes the last that
    speaks 1.0 (else the first). So two interfaces of one binding that speak 1.0, at two urls or
    with two tenants, send the two SDKs' requests to different places. List one interface of the
    binding for 1.0, the one clients should call; give the others a binding or version of their
    own, or drop them.""")
declare("KNO-CARD-BINDING", W, "a binding is written otherwise than A2A names it (`grpc` for `GRPC`)", """
    Clients pick an interface by comparing its binding with the ones they speak: a2a-sdk exactly,
    so `grpc`, `REST` or `JSON-RPC` match nothing there and the interface is never used (the JS SDK
    ignores case, so it takes `grpc` for `GRPC`, and the two call different interfaces). knoc publishes a binding
    as written (a custom binding is allowed); write A2A's name for it: `JSONRPC`, `GRPC` or
    `HTTP+JSON`.""")
declare("KNO-CARD-URL-HTTP", W, "a public card's url is plain http", """
    Clients send tasks, and often credentials, to the card's url. Over plain http they travel
    unencrypted and can be altered on the way; serve the agent over https.""")
declare("KNO-PROJECT-URL-PORTABLE", W, "a card's folder has a name Windows cannot hold", """
    A card is written under build/site/<host>/<url path>/, an extension's page under its uri's.
    A host with a port (`h:8443`) or an IPv6 address, or a path segment holding `<>:"|?*`, ending
    in a dot or a space, or that is a Windows device name (`con`, `nul`, `conin$`, `com1`,
    `lpt1`, with any extension) makes a folder name
    Windows cannot hold: git for Windows refuses to check out the build, so a Windows clone of
    the repo fails. Said once per host for a host's folder (not of a local host's port:
    `KNO-CARD-URL-LOCAL` says more). Where no one clones the repo on Windows, accept the code in
    knoc.toml's `[accept]`.""")
declare("KNO-CARD-ALIAS", W, "a card value is a YAML alias of one written outside the card", """
    A blueprint publishes its `a2a_projection` (but its `authentication.credentials`), its
    service class, perception domains and identity (slug, id, version), and nothing else of it:
    title, persona, goals, boundaries and the rest stay in the repo. A legacy card publishes
    neither its credentials nor its title, purpose, persona, goals, boundaries, ownership,
    provenance, taxonomy or relationships; an extension's page shows its title, description, params schema,
    uri, depends_on, evolution and required, and not its purpose or provenance. A YAML alias (`description:
    *prompt`) copies the value its anchor (`&prompt`) marks, so one written where nothing is
    published would be published with the card, while the card's own lines show only
    `*prompt`: as a value, as a key, as keys merged in (`<<: *base`, unless the card sets each
    itself), or as the whole card (`a2a_projection: *draft`). Said at the key that uses it.
    Write the published value there; a value meant to be public can be anchored where it is
    published and aliased from elsewhere instead.""")
declare("KNO-CARD-TEXT-CREDENTIALS", W, "a public card's text holds a credential", """
    A url with a user name and password, or with a parameter that carries a credential
    (`?api_key=`, `#access_token=`), written into any text of the card (a description, an
    example, a tag, an extension's params, a security scheme's fields, a key of any of them) is
    published with the card, to every client and registry that reads it (a user name alone,
    `ssh://git@github.com/...`, is an address, unless it is a token: `https://<token>@github.com/`);
    so is a credential
    written bare: an Authorization header's value (`Bearer <token>`, `Basic <base64>`), a JWT,
    or a key that begins as a well-known service's do (`ghp_`, `xoxb-`, `sk-`, `sk_live_`,
    `AKIA`, `ASIA`, `AIza`, `glpat-`), read as YAML reads its escapes. The finding masks it, and
    so does every excerpt; remove it. An address in prose (`support:team@example.com`) is no
    url; a placeholder (`Bearer <token>`, `Bearer YOUR_TOKEN`, `https://<user>:<token>@`,
    `user:password@`, `?apikey=demo`, `?client_secret=secret`, AWS's `...EXAMPLE` key, a JWT's
    header alone) and words (`basic ISO-8601 dates`, `sk-learn-compatible-v2`) are no
    credential; neither is flagged. A word a real password may be (`changeme`) is one.""")
declare("KNO-CARD-URL-CREDENTIALS", E, "a public card's url holds a user name, password, key or token", """
    The card's url, an interface's url, an extension's uri, or its documentation, icon or
    provider url holds a user name or password (`https://user:secret@host/`, and as browsers
    read a url, `https:/user:secret@host/` too), or a query or fragment parameter that carries a
    credential (`?api_key=`, `?pass=`, `?db_password=`, `#access_token=`, a presigned url's
    `X-Amz-Signature`; a name written with escapes, `?%70ass=`, read decoded as a server reads it, and
    a url carried encoded in another parameter, `?next=https%3A...%3Fpassword%3D...`). `key`, `token`
    (and names ending in them, but a page's, a cache's or a publishable one), `sig`, `auth`, `code`,
    `hmac`, `appid` and `ticket` name other things too: they count only with a value of 16 or more
    token characters holding digits and letters, and not one whose parts are each a word, a number
    or both (a page's name, a version, a path: `?key=docs/quickstart-v2`), unless it begins as a
    well-known secret does (`ghp_`, `sk-`, `xoxb-`). A yes or no, and a placeholder a reader fills in
    (`YOUR_API_KEY`, `<token>`, `{api_key}`), are no secrets. A parameter written as a path
    segment (`.../api_key=sk123live/run`) counts with a credential's own name before a token-like
    value (letters and digits, 8 or more), not `password=reset` or `key=3f2a9c1d`. The card
    is public: so would they be, in the card, its agent.json, the catalog and the index. Publish
    the URL without them; a client brings its own credentials, as the card's security schemes
    say. The message never repeats them.""")
declare("KNO-CARD-LINK", E, "a card's documentation, icon or provider url is not an http(s) URL", """
    Card viewers (catalogs, registries, the SDKs' tools) show `documentation_url`, `icon_url`
    and `provider.url` as links or images. A `javascript:` URL runs script in whoever opens it,
    a `file:` one opens a file on their machine, and a relative one leads nowhere. Write the
    page's full https URL; an icon may also be a `data:image/` URL.""")
declare("KNO-CARD-NUMBER", E, "a card would hold an integer JSON clients cannot read exactly", """
    JavaScript and most JSON readers hold a number as a double: an integer past 2**53 - 1 (either
    way) comes out as another number (a2a-sdk reads 12345678901234567890 as
    12345678901234567168), and a signature over the card cannot verify where it is read so.
    knoc refuses such a card, as its own reader refuses one. Write the value as a string.""")
declare("KNO-CARD-HIDDEN-TEXT", W, "a card's text holds a character that hides or reorders what is shown", """
    A direction override, embedding or isolate (U+202A to U+202E, U+2066 to U+2069) makes a
    viewer show the text around it in another order than it is stored ("Trojan Source"); a
    zero-width space, word joiner, invisible operator, byte order mark or interlinear annotation
    is not shown at all, blank letters (the Hangul fillers, the Braille blank) show as nothing,
    and the tag characters (U+E0000 to U+E007F), the variation selectors past U+E0100 and a run
    of two or more variation selectors (after an emoji, say; joiners between them, and the
    Mongolian ones, too) spell out text a person never sees
    but a language model reads. A control character (an escape, a
    carriage return, a bell; not a tab or a line break) makes a terminal that prints the card
    rewrite what it showed. In a card's name, description, version, provider, modes, extension
    descriptions, skill ids, names, tags, examples or modes, people (and the catalog pages) would
    read another text than clients and models act on; in one of its urls, a viewer shows
    another url than clients fetch. Remove the character.
    Right-to-left text needs none of them (its marks, LRM and RLM, are not flagged), nor do
    emoji: a subdivision flag's tags and one variation selector after a character (U+FE0F after
    an emoji; one from U+E0100 up after an ideograph) are not flagged.""")
declare("KNO-CARD-AUTH-URL", E, "a security scheme's endpoint is not an absolute URL", """
    A client authenticates at the endpoints a card's security schemes name: the OAuth token,
    authorization, device authorization and refresh URLs, the authorization server's metadata
    and the OpenID Connect discovery document. A2A requires each to be a URL; a relative path
    or a bare word leaves the client nowhere to go, and it cannot call the agent. Write the
    endpoint's full https URL.""")
declare("KNO-CARD-AUTH-HTTP", W, "a security scheme's endpoint is plain http", """
    OAuth 2.0 and OpenID Connect require TLS: over plain http, client secrets, codes and
    tokens travel unencrypted and can be read or altered on the way. Use the endpoint's https
    URL. (A loopback or local address is KNO-CARD-URL-LOCAL instead.)""")
declare("KNO-CARD-SIZE", E, "a card would be larger than a published card may be (256 KiB)", """
    Clients fetch a card on every discovery and hold it in memory; a card of megabytes is a
    mistake (a pasted document, aliases expanded) or an attack on them. knoc refuses to publish
    a card over 256 KiB: shorten its descriptions and examples, or split its skills.""")
declare("KNO-PROJECT-WIRE", E, "the card does not fit the wire model (a knoc bug: please report)", """
    Every card passes through the target's wire models before it is written. A card that does not
    fit means a derivation rule let something through; please report it with the entity.""")
declare("KNO-OUTPUT-COLLISION", E, "two outputs (cards, pages, index files) would be written to one path", """
    Every published file has one owner. Two card urls, extension URIs or knoc's own files
    (the catalog page, the index, `_headers`) that land on one path, or a file where another
    output needs a folder, would overwrite each other. Give the entity a url or uri of its own;
    the message names the other source.""")
declare("KNO-EXT-REQUIRED", W, "an extension that says clients must activate it is optional on a card", """
    An extension entity's `required: true` says a client must activate the extension to talk to
    an agent declaring it, and its page says so; but what a client reads is the card's entry,
    whose `required` is false when left out. Say `required: true` on the entry, or make the
    extension optional in its entity, so that the page and the cards agree.""")
declare("KNO-HOST-NO-ROOT", W, "a host's root card is not published (said when it goes, or the host is new)", """
    A client given only a host looks for its card at the origin's well-known path
    (`https://host/.well-known/agent-card.json`, A2A 8.2). A host with one public agent serves
    that agent's card there too; with several, the one knoc.toml's `[primary]` names, or the
    agent whose url is the host's root. A build says so when a host's root card goes (a second
    agent on the host, a `[primary]` line removed) and when it first publishes a host of several
    agents without one; not again at each build, so a host that means to have none is left in
    peace. A host whose last public agent leaves is gone whole, its root card with it: `knoc diff`
    reports that, agent by agent. Name the host's primary to give it one.""")
declare("KNO-CARD-URL-JS", W, "the JS SDK, given this agent's url, finds another agent's card", """
    @a2a-js/sdk resolves `.well-known/agent-card.json` against the url it is given, as a
    relative URL: for `https://host/name` that is the host's root, where another agent's card
    (the host's primary) is served. End the url with `/` (`https://host/name/`): the card stays
    where it is, and every client, the JS SDK included, finds this agent's own card.""")
declare("KNO-OUTPUT-CASE", W, "two outputs differ only in case or Unicode form (one file on macOS or Windows)", """
    URL paths are case-sensitive, so `/Foo` and `/foo` are two cards, and knoc writes both. A
    file system that folds case or Unicode form (macOS's and Windows' by default) holds only one
    of the two files: a checkout of a committed build/ there loses one, and `knoc check` there
    reports it missing. Two folders on the way (`/Foo/` and `/foo/v2/`) become one folder there,
    named one way: the other agent's card is no longer at its url. Give one of them a url that
    differs in more than case.""")
declare("KNO-CATALOG-PAGE-TAKEN", W, "an extension's page takes the place of a host's catalog page", """
    Each host's tree carries a catalog page of its agents at its root (`index.html`). An
    extension whose uri is that host's root publishes its page there instead, so the host has no
    catalog page and its agent pages link to the extension. The all-hosts catalog still lists
    the agents; give the extension a uri with a path to keep both.""")
declare("KNO-EXTENSION-NO-PAGE", W, "a public extension's uri cannot be a page, so it gets none", """
    knoc writes each public extension's page at its uri, so that a client or a person following
    the uri from a card finds what the extension means. A uri that is not http(s), whose path
    has a `.well-known` segment (where cards are served), or whose host or path cannot be a
    folder gets no page. Cards still carry the uri as written; give the extension an https uri
    on a host and path of its own to publish its page.""")
declare("KNO-SERVICE-CLASS-TWICE", E, "`service_class` and a hand-written service-class extension entry", """
    knoc writes the service-class extension entry from `service_class`; keep that and remove the
    hand-written entry.""")
declare("KNO-CONFIG-PRIMARY", E, "knoc.toml's `[primary]` names an agent that is not a host's public agent", """
    A host serves one agent's card at its origin root (`https://host/.well-known/agent-card.json`,
    where A2A 8.2 and clients that resolve a card from a url's origin look): its agent at the root
    url, else its only public agent, else the one `[primary]` in knoc.toml names for it. The named
    agent must publish its card on that host, and a host whose root url already is an agent's
    needs no line.""")
declare("KNO-URL-DUPLICATE", E, "two public agents share a url", """
    Two public agents with one url would share one card path. The first by slug keeps it; give the
    other its own url.""")
# --- extensions and the capability contract ---------------------------------------
declare("KNO-EXT-SCHEMA", E, "an extension's `params_schema` is not a valid JSON Schema", """
    An extension entity describes the params its card entries take as a JSON Schema (draft
    2020-12); cards' entries are checked against it.""")
declare("KNO-EXT-DUPLICATE", E, "an extension URI is declared by two entities, or twice on one card", """
    One entity per extension URI, and one entry per URI on a card.""")
declare("KNO-EXT-CREDENTIALS", E, "a public extension's page would publish a credential", """
    A public extension's page is published at its uri, and shows the uri, the uris it depends
    on, its title, description and params schema; the uri is shown on every card that declares
    it too. A user name or password in one of those uris, a parameter that carries a key or
    token (`?token=`, `#access_token=`), or such a url written into its text, or a credential
    written there bare (`Bearer <token>`, a JWT, a `ghp_` or `sk_live_` key) would be published
    with them. Give the uris and the text without them. The message never repeats them.""")
declare("KNO-EXT-UNVERSIONED", W, "a `versioned` extension's URI carries no version segment (such as /v1)", """
    A versioned extension mints a new URI for each breaking change, so its URI ends in a version
    segment such as /v1. Add one, or declare `evolution: additive`.""")
declare("KNO-EXT-UNKNOWN", W, "a card declares an extension no extension entity describes", """
    Nothing in the repo says what this extension URI means or which params it takes. Add
    content/extensions/<name>.kno, or check the URI for a typo.""")
declare("KNO-EXT-PARAMS", E, "a card's extension params do not fit the extension's `params_schema`", """
    The entry's params are checked against the extension entity's params_schema; the first
    problem and its location are given.""")
declare("KNO-EXT-PARAMS-UNKNOWN", W, "a card's extension params name a field the `params_schema` does not define", """
    Clients ignore params they do not know (forward compatibility), so an unknown name is likely a
    typo. Add it to the extension's params_schema, or remove it.""")
declare("KNO-EXT-DEPENDENCY", E, "a required extension's dependency is not declared on the same card", """
    A required extension that depends on another needs that one on the same card.""")
declare("KNO-CONTRACT-BY-HAND", E,
         "a card writes the capability-contract extension entry itself (knoc generates it)", """
    knoc writes the capability-contract entry from `min_protocol_version`, `max_protocol_version`,
    `protocol_versions` and the capability flags; remove the hand-written entry.""")
declare("KNO-PROTOCOL-RANGE", E,
         "the protocol range is inverted (min above max) or leaves out a version an interface speaks", """
    The declared protocol range must hold together: min at most max, and every version the url or
    an interface speaks (the build target's, when none is stated) inside it.""")
declare("KNO-PROTOCOL-PATCH", W, "a protocol version carries a patch number", """
    Cards name A2A protocol versions as Major.Minor (A2A 1.0, section 3.6): "1.0", not "1.0.0".
    knoc publishes the Major.Minor form; write it that way in the source.""")
declare("KNO-PROTOCOL-TARGET", E, "an A2A 0.3 card has no interface that speaks A2A 0.3", """
    A 0.3 card sends its clients to its `url`, so that url must answer them: the card's url is the
    first interface (the main url first) whose `protocol_versions` list 0.3 (or another version
    before 1.0), and the build refuses a card where none does. Add "0.3" to the versions of the
    interface that answers 0.3 clients, or build for 1.0.""")
declare("KNO-PROTOCOL-TOO-OLD", W, "a 1.0 or compat card lists a binding none of whose interfaces 1.0 clients call", """
    A 1.0 client takes the first binding the card lists that it speaks, then calls an interface of
    that binding that speaks A2A 0.3 or later: where every interface of the binding speaks only
    0.2, a2a-sdk 1.x finds none to call, and @a2a-js/sdk calls the first in A2A 1.0. The card is
    written (and `agent.json` serves 0.2 clients), but a 1.0 client of that binding cannot use it.
    Add "1.0" (or "0.3") to the versions of the interface that answers them, or build for 0.3,
    where the card itself is for older clients.""")
declare("KNO-PROTOCOL-UNSTATED", W, "an older card states no protocol versions: the target's default is claimed", """
    An agent-card or agent-blueprint before 0.4.0 that states no `protocol_versions` for its url
    is published with the build target's versions (1.0 and 0.3 for compat, 0.3 for 0.3, 1.0 for
    1.0; an additional interface: the first). So one blueprint makes different claims per target. State each
    interface's versions, or declare `agent-blueprint@0.4.0`, where an unstated interface speaks
    A2A 1.0 under every target.""")
declare("KNO-COMPAT-JS", W, "the JS SDK reads a compat card's security schemes as they are, unconverted", """
    @a2a-js/sdk converts a card to its typed model only when the card's schemes have no `type`
    (the 1.0 shape alone). A compat card's schemes carry 0.3's `type` beside their 1.0 wrapper, for
    0.3 clients, so the JS SDK hands an application the card as it is: a scheme read through its
    typed form (`scheme.$case`) is none, and only its raw fields say how to authenticate. a2a-sdk
    1.x and 0.3 read the schemes. Build with `--a2a 1.0` where JS applications read the schemes
    (0.3 clients then read agent.json, in the 0.3 shape); where none do, accept the warning for
    the agent's file (`[accept]` in knoc.toml).""")
declare("KNO-LEGACY-VIEW", W, "0.2 or 0.3 clients cannot be served as the card says: no agent.json, a compat card "
        "without 0.3 fields, or what a2a-sdk 0.2 cannot read of agent.json", """
    agent.json (read by 0.2 clients) and a compat card's 0.3 top-level fields (read by 0.3 clients)
    send a client to an interface that speaks A2A 0.3 (or another version before 1.0). When no
    interface of the agent does, pointing them at a 1.0-only endpoint would fail every request, so
    agent.json is not written and a compat card goes out as a 1.0 card. Add "0.3" to the
    `protocol_versions` of an interface that answers 0.3 clients, if one does. agent.json is not
    written either when every alternative of a security requirement needs an OAuth flow only A2A
    1.0 has (device code): its 0.3 card would state no requirement, and look open. And a2a-sdk 0.2,
    which agent.json is kept for in every target, reads A2A 0.2: it cannot read an agent.json
    holding a mutual TLS scheme (its clients cannot use the agent, while 0.3 and 1.x clients read
    the scheme), and it ignores a skill's own `security` (its clients read the card's requirements
    for that skill) and an OAuth scheme's `oauth2_metadata_url`.""")
declare("KNO-CAP-DEPRECATED", W,
         "a card declares, or a `composes` link requires, a deprecated (tier 3) capability", """
    Deprecated capabilities are still honoured but discouraged; the message names the capability
    that replaces it.""")
declare("KNO-CAP-UNKNOWN", E, "a `composes` link requires something that is not a capability", """
    `requires` names capability flags (tier 1 and 2, e.g. streaming_message) or extensions as
    ext:<uri>. A close match is suggested.""")
declare("KNO-CHAIN-REQUIRES", E, "an agent on a delegation chain does not declare what a link above it requires", """
    A `composes` link's `requires` holds for every agent reachable below it. The message names the
    whole chain to the agent that does not declare the capability.""")
declare("KNO-CHAIN-PROTOCOL", E, "two agents on a delegation link share no A2A protocol version", """
    A delegation link needs at least one A2A protocol version both agents speak. Widen one side's
    protocol range or interface versions.""")
declare("KNO-COMPOSES-CYCLE", W, "`composes` links form a delegation cycle", """
    A task handed round a delegation loop can come back forever. A loop may be deliberate, so this
    is a warning: break one link, or make sure the agents stop delegating.""")
# --- tools ---------------------------------------------------------------------------
declare("KNO-SIGNING", E, "a signing key cannot be used, or must not be (exit 2)", """
    `--sign-key`, KNOC_SIGNING_KEY and knoc.toml's `[signing] key` name the keys a build signs
    with. A private key must be an unencrypted PEM Ed25519 or P-256 key kept outside the repo (a key
    file inside it is refused: once committed, it is public). `[signing] public` pins the public
    halves of the signing keys and `retired` lists old ones still published: each a PEM or JWK
    file inside the repo, or an inline JWK table. A build with a key knoc.toml does not pin is
    refused, and so is a check of a signed build when nothing pins its keys.""")
declare("KNO-SIGNING-KEY", W, "the signing key given here would stop a build", """
    `knoc validate` reads the signing key a build here would sign with (`KNOC_SIGNING_KEY`, else
    knoc.toml's `[signing] key`) and checks it as the build does: it must read as an Ed25519 or
    P-256 private key outside the repo, and be one `[signing] public` pins. Validating signs
    nothing, so this is a warning: a teammate or a CI job without the key can still validate.
    The keys knoc.toml pins are the repo's own, and a problem with one is `KNO-SIGNING`.""")
declare("KNO-SIGNING-KEY-EXPOSED", W, "the signing key file can be read or replaced by other users of this machine", """
    The private key signs every card: whoever reads it can sign cards your clients will trust. A
    key file whose group or other users may read it (a PEM written under the usual umask, 0644)
    is used, and said; `chmod 600` it, or keep it in a CI secret. So is a key file they can
    replace, as OpenSSH's StrictModes checks: one of another user's, or one reached (each link
    followed) through a folder or link of another user's, or a folder they may write to without
    the sticky bit. So is a key file with a second name (a hard link), which cannot be followed
    to where it is and may lie inside a repo, to be committed (a symbolic link there is refused).
    `knoc validate` says it too, of the key a build would read, and `knoc keys new` of the key
    it has just written.""")
declare("KNO-SIGNING-KEY-GONE", W, "build/ is signed with a key this build neither signs with nor publishes", """
    A key rotation keeps the old key in each host's `jwks.json` for a while (`retired` under
    [signing]), so that copies of the cards it signed, in caches and other registries, still
    verify. A build whose keys leave out the key build/ was signed with drops it from the key
    sets at once: list its public half under `retired`, and drop it there later. The same goes
    for a new key published under the old key's kid (a new key pinned with [signing] `kid` still
    set): a client looks the old cards' kid up and finds a key that does not verify them. Give
    the new key a kid of its own, and retire the old one under its kid.""")
declare("KNO-SIGNING-PIN-IDLE", W, "a key knoc.toml pins does not sign this build", """
    A rotation pins the new key beside the old one and signs with both while clients pick up the
    new key set. A build given only one of them (`--sign-key` once) drops the other key's
    signature from every card, and a client that trusts only that key can no longer verify them.
    Sign with every pinned key, or, once the new key alone signs, move the old one from `public`
    to `retired`.""")
declare("KNO-SIGNING-UNPINNED", W, "a build is signed with a key knoc.toml does not pin", """
    `knoc check` verifies a signed build without the private key, against the public keys knoc.toml
    pins in `[signing] public`. With no pin it cannot tell the build's key from one planted in its
    key sets, and refuses to check a signed build. Add the line the hint gives (the key's public
    half, safe to commit).""")
declare("KNO-SIGNING-UNPROTECTED", W, "a signed card holds values no signature can protect", """
    Every A2A SDK drops empty strings, lists and objects from a card before checking a signature
    (section 8.4.1), so a copy without them verifies as well. Where an empty value means something
    (a requirement with no scopes, `bearer: []`; an empty requirement, "or no authentication"; an
    OAuth flow with no scopes, which A2A 1.0 requires, or a scope with no description; a mutual
    TLS scheme with no description, of which nothing else is written; an empty value in an
    extension's params) a signed build lists each, once per card. Give requirements scopes where
    the scheme has them; otherwise the signature does not prove which authentication a client
    must use.""")
declare("KNO-SIGNING-UNVERIFIABLE", W, "a client generation cannot verify a signed card", """
    A client verifies a signature over its own reading of the card (section 8.4.1), and knoc signs
    each client's reading, except one that is another's with members left out: a signature over
    it would verify the card stripped of them, for every client. The JS SDK's client verifies
    the card its resolver hands it, which leaves out the security schemes of a 1.0 card (whose
    schemes have no 0.3 `type`) and of a 0.3 card; a client handed a card without them sends no
    credentials. So knoc signs no such reading, and that client rejects these cards. Build with
    `--a2a compat` when JS clients verify cards: its schemes carry `type` too, and the resolver
    hands the card to its client as fetched.""")
declare("KNO-UNSIGNED", E, "a build without a signing key, in a repo that signs", """
    build/ is signed (its manifest names the keys), or knoc.toml pins a key, and no key was given, so
    the cards would go out without signatures. Nothing is written. Give the key (--sign-key,
    KNOC_SIGNING_KEY, or `key` under [signing]), or pass --unsigned to drop them on purpose.""")
declare("KNO-SIGNATURE", E, "a card's signature does not verify, or a signed card lacks one", """
    In a repo that signs its cards (knoc.toml pins their keys), every card must carry exactly the
    signatures a build writes: one per pinned key the manifest names and per distinct view its
    clients verify (a2a-sdk 1.x, the JS SDK, a2a-sdk 0.3), each with knoc's protected header and
    nothing unprotected. A card that lost its signatures, one signed by another key, or one whose
    signatures carry extra members is an error. Rebuild with the signing key; `knoc verify CARD
    --jwks FILE` shows what failed.""")
declare("KNO-DRIFT", E, "`knoc check`: a file under build/ is stale, missing or extra", """
    The committed build/ is not what the sources compile to. Run `knoc build` and commit build/.""")
declare("KNO-DIFF-NOT-COMPARED", E, "`knoc diff`: one side does not compile, so nothing was compared", """
    `knoc diff` compares the cards both sides publish, so both must compile cleanly. When the
    sources at a ref do not, nothing is compared and the run fails, in every format (a CI step
    that uploads SARIF or JUnit shows the failure, not an empty pass). Check that side out and
    run `knoc check` to see why, or compare with another ref.""")
declare("KNO-CARD-BREAKING", W, "`knoc diff`: a change to a published card or domain that breaks clients", """
    Removing or moving something a client may rely on (an agent, a skill, a capability, an
    extension, an accepted mode, a protocol version, a domain's agent) breaks it. Under
    `--fail-on breaking` these are errors.""")
