window.KNOC_CATALOG = {"index": {
  "agents": [
    {
      "slug": "auth-agent",
      "id": "01KKSY9XYZ789ABC123DEF4567",
      "name": "Possibility Auth Agent",
      "url": "https://api.possibility.space/a2a/auth/v1",
      "card": "api.possibility.space/a2a/auth/v1/.well-known/agent-card.json",
      "domains": [
        "realm-activity"
      ],
      "service_class": {
        "class": "unknown",
        "source": "unknown"
      }
    },
    {
      "slug": "catalog-search",
      "id": "01KKV1CATA10GSEARCH0000005",
      "name": "Catalog Search",
      "url": "https://agents.possibility.space/catalog-search",
      "card": "agents.possibility.space/catalog-search/.well-known/agent-card.json",
      "domains": [
        "entity-health",
        "schemas"
      ],
      "service_class": {
        "class": "utility",
        "source": "inferred"
      }
    },
    {
      "slug": "drift-sentinel",
      "id": "01KKV1DR1FT5ENT1NE10000002",
      "name": "Drift Sentinel",
      "url": "https://agents.possibility.space/drift-sentinel",
      "card": "agents.possibility.space/drift-sentinel/.well-known/agent-card.json",
      "domains": [
        "drift-surfaces",
        "entity-health"
      ],
      "service_class": {
        "class": "ephemeral",
        "source": "declared"
      }
    },
    {
      "slug": "echo-agent",
      "id": "01KKSY8ABC123DEF456GHJ7890",
      "name": "Echo Agent",
      "url": "https://api.possibility.space/a2a",
      "card": "api.possibility.space/a2a/.well-known/agent-card.json",
      "domains": [],
      "service_class": {
        "class": "unknown",
        "source": "unknown"
      }
    },
    {
      "slug": "quick-summarizer",
      "id": "01KKV1QV1CKSVMMAR1ZER00004",
      "name": "Quick Summarizer",
      "url": "https://agents.possibility.space/quick-summarizer",
      "card": "agents.possibility.space/quick-summarizer/.well-known/agent-card.json",
      "domains": [],
      "service_class": {
        "class": "ephemeral",
        "source": "declared"
      }
    },
    {
      "slug": "realm-concierge",
      "id": "01KKV1REA1MC0NC1ERGE000003",
      "name": "Realm Concierge",
      "url": "https://realms.possibility.space/agents/concierge",
      "card": "realms.possibility.space/agents/concierge/.well-known/agent-card.json",
      "domains": [
        "realm-activity"
      ],
      "service_class": {
        "class": "principal",
        "source": "declared"
      }
    },
    {
      "slug": "schema-steward",
      "id": "01KKV1S7EWARD0000000000001",
      "name": "Schema Steward",
      "url": "https://agents.possibility.space/schema-steward",
      "card": "agents.possibility.space/schema-steward/.well-known/agent-card.json",
      "domains": [
        "api-surface",
        "schemas"
      ],
      "service_class": {
        "class": "utility",
        "source": "declared"
      }
    }
  ]
},
"details": {"auth-agent":{"description":"Provisions and manages Keycloak realms, clients, roles, and SMTP\nconfiguration for per-possibility authentication.\n","version":"0.1.0","interfaces":[{"url":"https://api.possibility.space/a2a/auth/v1","binding":"JSONRPC","versions":["1.0","0.3"]}],"capabilities":["streaming"],"provider":"Possibility","documentation":null,"security":["bearer"],"modes":{"input":["text/plain"],"output":["text/plain"]},"skills":[{"name":"Provision Realm","description":"Create a new pspace-{slug} Keycloak realm","tags":["auth","provisioning","keycloak"],"examples":[]},{"name":"Configure Realm OAuth","description":"Set up per-realm OIDC discovery and branding","tags":["auth","oauth","oidc"],"examples":[]},{"name":"Configure Realm SMTP","description":"Configure per-realm email sender","tags":["auth","email","smtp"],"examples":[]},{"name":"Create Realm Roles","description":"Define roles within a target realm","tags":["auth","roles","rbac"],"examples":[]},{"name":"Deprovision Realm","description":"Tear down realm and all associated resources","tags":["auth","provisioning","cleanup"],"examples":[]}]},
"catalog-search":{"description":"Searches the KNO content catalog by name, type, domain or tag.","version":"0.4.2","interfaces":[{"url":"https://agents.possibility.space/catalog-search","binding":"JSONRPC","versions":["1.0"]},{"url":"grpc.agents.possibility.space:443","binding":"GRPC","versions":["1.0"]},{"url":"https://agents.possibility.space/catalog-search/rest","binding":"HTTP+JSON","versions":["0.3"]}],"capabilities":["streaming"],"provider":"Possibility","documentation":null,"security":[],"modes":{"input":["text/plain","application/json"],"output":["application/json"]},"skills":[{"name":"Find entities","description":"Returns entities matching a query, ranked by relevance.","tags":["search","catalog"],"examples":["agents watching the schemas domain"]}]},
"drift-sentinel":{"description":"Compares derived artifacts with their sources and reports drift.","version":"0.2.1","interfaces":[{"url":"https://agents.possibility.space/drift-sentinel","binding":"JSONRPC","versions":["1.0","0.3"]}],"capabilities":["streaming"],"provider":"Possibility","documentation":null,"security":[],"modes":{"input":["text/plain"],"output":["text/plain"]},"skills":[{"name":"Drift sweep","description":"Rebuilds a tree in memory and lists the files that drifted.","tags":["drift","diagnostics"],"examples":["Sweep build/ against content/"]}]},
"echo-agent":{"description":"Echoes back messages for testing A2A connectivity","version":"0.1.0","interfaces":[{"url":"https://api.possibility.space/a2a","binding":"JSONRPC","versions":["1.0","0.3"]}],"capabilities":[],"provider":"Possibility","documentation":null,"security":[],"modes":{"input":["text/plain"],"output":["text/plain"]},"skills":[{"name":"Echo","description":"Echoes back the input message","tags":["testing","diagnostics"],"examples":[]}]},
"quick-summarizer":{"description":"Condenses a document into a short summary and a list of key points.","version":"0.1.0","interfaces":[{"url":"https://agents.possibility.space/quick-summarizer","binding":"JSONRPC","versions":["1.0","0.3"]}],"capabilities":["streaming"],"provider":"Possibility","documentation":null,"security":[],"modes":{"input":["text/plain","text/markdown","application/pdf"],"output":["text/markdown"]},"skills":[{"name":"Summarize","description":"Returns a five-sentence summary and up to seven key points.","tags":["summarize","documents"],"examples":[]}]},
"realm-concierge":{"description":"Helps members of a realm with sign-in, roles and account questions.","version":"1.0.0","interfaces":[{"url":"https://realms.possibility.space/agents/concierge","binding":"JSONRPC","versions":["1.0","0.3"]}],"capabilities":["extended card"],"provider":"Acme Research","documentation":null,"security":["realm-oidc"],"modes":{"input":["text/plain"],"output":["text/plain"]},"skills":[{"name":"Account help","description":"Answers questions about sign-in, password reset and roles.","tags":["support","accounts"],"examples":["Why can't I see the billing page?"]},{"name":"Role administration","description":"Grants and revokes a member's realm roles.","tags":["support","roles"],"examples":[]}]},
"schema-steward":{"description":"Reviews KNO spec changes and checks that minor versions stay strictly additive.","version":"0.3.0","interfaces":[{"url":"https://agents.possibility.space/schema-steward","binding":"JSONRPC","versions":["1.0","0.3"]}],"capabilities":["streaming","push notifications"],"provider":"Possibility","documentation":"https://possibility.space/docs/agents/schema-steward","security":["platform-oauth"],"modes":{"input":["text/plain","application/json"],"output":["application/json"]},"skills":[{"name":"Review spec change","description":"Checks a spec diff for breaking changes and a matching version bump.","tags":["schemas","review","api"],"examples":["Is the change to agent-card-schema strictly additive?"]},{"name":"Explain schema","description":"Explains what a spec entity's JSON Schema accepts.","tags":["schemas","docs"],"examples":[]}]}}};
