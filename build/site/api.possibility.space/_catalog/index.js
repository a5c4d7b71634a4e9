(window.KNOC_CATALOG = window.KNOC_CATALOG || {"index": {"agents": []}, "details": {}}).index.agents.push(
{"card": "api.possibility.space/a2a/auth/v1/.well-known/agent-card.json", "domains": ["realm-activity"], "id": "01KKSY9XYZ789ABC123DEF4567", "name": "Possibility Auth Agent", "service_class": {"class": "unknown", "source": "unknown"}, "slug": "auth-agent", "url": "https://api.possibility.space/a2a/auth/v1"},
{"card": "api.possibility.space/a2a/.well-known/agent-card.json", "domains": [], "id": "01KKSY8ABC123DEF456GHJ7890", "name": "Echo Agent", "service_class": {"class": "unknown", "source": "unknown"}, "slug": "echo-agent", "url": "https://api.possibility.space/a2a"}
);
