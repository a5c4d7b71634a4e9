(window.KNOC_CATALOG = window.KNOC_CATALOG || {"index": {"agents": []}, "details": {}}).index.agents.push(
{"card": "realms.possibility.space/agents/concierge/.well-known/agent-card.json", "domains": ["realm-activity"], "id": "01KKV1REA1MC0NC1ERGE000003", "name": "Realm Concierge", "service_class": {"class": "principal", "source": "declared"}, "slug": "realm-concierge", "url": "https://realms.possibility.space/agents/concierge"}
);
